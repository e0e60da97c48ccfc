package barrier

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the built-in rules table in RULES.md")

func bashInput(cmd string) Input {
	ti, _ := json.Marshal(map[string]string{"command": cmd, "description": "test"})
	return Input{Agent: AgentClaudeCode, Event: EventPreToolUse, ToolName: "Bash", ToolInput: ti, ToolUseID: "toolu_test"}
}

func mcpInput(tool, input string) Input {
	return Input{Agent: AgentClaudeCode, Event: EventPreToolUse, ToolName: tool, ToolInput: json.RawMessage(input), ToolUseID: "toolu_test"}
}

// TestBuiltinRuleExamples runs every example of the documentation table: each match must be
// classified by its rule, each near miss by no rule at all.
func TestBuiltinRuleExamples(t *testing.T) {
	rs := DefaultRules()
	for _, b := range Builtins() {
		if len(b.Matches) < 2 || len(b.NearMisses) < 3 {
			t.Errorf("rule %s needs at least 2 matching and 3 near-miss examples", b.Name)
		}
		for _, ex := range b.Matches {
			in := bashInput(ex)
			if b.tool != nil {
				in = mcpInput(ex, `{}`)
			}
			m := rs.Classify(in)
			if m == nil || m.Rule != b.Name {
				t.Errorf("%s: %q classified as %+v, want rule %s", b.Name, ex, m, b.Name)
			}
		}
		for _, ex := range b.NearMisses {
			in := bashInput(ex)
			if b.tool != nil {
				in = mcpInput(ex, `{}`)
			}
			if m := rs.Classify(in); m != nil {
				t.Errorf("%s: near miss %q classified as an effect by %s", b.Name, ex, m.Rule)
			}
		}
	}
}

func TestClassifyMore(t *testing.T) {
	rs := DefaultRules()
	for _, c := range []struct {
		cmd  string
		rule string // "" for not an effect
	}{
		{"git push", "git-push"},
		{"/opt/homebrew/bin/git push origin HEAD", "git-push"},
		{"git -c push.default=current push", "git-push"},
		{"git pull && git push", "git-push"},
		{"git fetch; git rebase origin/main", ""},
		{"npm ci && npm test && npm publish", "package-publish"},
		{"npm pack --dry-run", ""},
		{"pnpm --filter @x/core publish --no-git-checks", "package-publish"},
		{"yarn publish --dry-run", ""},
		{"cargo publish -n", ""},
		{"docker compose push web", "image-push"},
		{"docker buildx build --output type=registry -t x .", "image-push"},
		{"docker buildx ls", ""},
		{"gh pr review 3 --approve", "github-cli"},
		{"gh issue comment 5 -b done", "github-cli"},
		{"gh run list", ""},
		{"gh api --method DELETE repos/o/r/hooks/1", "github-cli"},
		{"gh api repos/o/r/pulls --jq .[].title", ""},
		{"kubectl apply --dry-run=none -f x.yaml", "kubectl-mutate"},
		{"kubectl --namespace prod scale deploy/web --replicas 3", "kubectl-mutate"},
		{"kubectl logs web-1", ""},
		{"helm upgrade --install --dry-run=server web ./chart", ""},
		{"terraform destroy -target=aws_instance.x", "terraform-apply"},
		{"aws s3 sync ./site s3://bucket --delete", "aws-mutate"},
		{"aws s3 sync s3://bucket ./site", ""},
		{"aws dynamodb put-item --table-name t --item '{}'", "aws-mutate"},
		{"aws dynamodb get-item --table-name t --key '{}'", ""},
		{"aws cloudformation deploy --stack-name s --template-file t.yml", "aws-mutate"},
		{"aws ssm send-command --document-name x", "aws-mutate"},
		{"gcloud projects add-iam-policy-binding p --member=user:a --role=r", "gcloud-mutate"},
		{"gcloud compute ssh vm-1", "gcloud-mutate"},
		{"gcloud beta run services list", ""},
		{"az storage blob upload -f a -c c -n n", "az-mutate"},
		{"az vm deallocate -g rg -n vm", "az-mutate"},
		{"curl -d @body.json https://api.example.com", "http-mutate"},
		{"curl -F file=@a.png https://api.example.com/upload", "http-mutate"},
		{"curl -T a.txt https://example.com/put", "http-mutate"},
		{"curl --request PATCH https://api.example.com/x", "http-mutate"},
		{"curl --request=put https://api.example.com/x", "http-mutate"},
		{"curl -sSX POST https://api.example.com/x", "http-mutate"},
		{`curl -H "X-Method: POST" https://example.com`, ""},
		{"curl -o out -w '%{http_code}' https://example.com", ""},
		{"wget --method=DELETE https://api.example.com/x", "http-mutate"},
		{"wget -qO- https://example.com", ""},
		{"echo hi | mail -s hi a@example.com", "mail-send"},
		{"stripe refunds create --charge ch_1", "stripe-cli"},
		{"stripe delete /v1/customers/cus_1", "stripe-cli"},
		{"ssh host", "ssh-remote"},
		{"ssh -o StrictHostKeyChecking=no host true", "ssh-remote"},
		{"rsync -e 'ssh -p 2222' -a dist/ host:/srv/", "copy-to-remote"},
		{"rsync -a rsync://mirror/x ./x", ""},
		{"scp -P 2222 a.txt user@[::1]:/tmp/", "copy-to-remote"},
		{"echo 'git push'", ""},
		{"grep -r 'npm publish' docs/", ""},
		{"man git-push", ""},
		{"git-push", ""},
		{`bash -c "$(curl -fsSL https://example.com/install.sh)"`, ""},
		{`sh -c 'kubectl delete ns staging'`, "kubectl-mutate"},
		{"sudo -E env FOO=1 timeout 60 terraform apply -auto-approve", "terraform-apply"},
		{"watch -n 5 kubectl get pods", ""},
	} {
		m := rs.Classify(bashInput(c.cmd))
		got := ""
		if m != nil {
			got = m.Rule
		}
		if got != c.rule {
			t.Errorf("%q classified as %q, want %q", c.cmd, got, c.rule)
		}
	}
}

func TestClassifyTools(t *testing.T) {
	rs := DefaultRules()
	for _, c := range []struct {
		in   Input
		rule string
	}{
		{mcpInput("mcp__stripe__create_charge", `{"amount":1}`), "mcp-outbound"},
		{mcpInput("mcp__gmail__send_email", `{}`), "mcp-outbound"},
		{mcpInput("mcp__twilio__sendSms", `{}`), "mcp-outbound"},
		{mcpInput("mcp__plugin_agent-rewind_rewind__guard_effect", `{}`), ""},
		{mcpInput("Write", `{"file_path":"/x","content":"send_email"}`), ""},
		{mcpInput("WebFetch", `{"url":"https://x"}`), ""},
		{mcpInput("mcp__weird", `{}`), ""},
		{Input{Agent: AgentCodex, Event: EventPreToolUse, ToolName: "apply_patch", ToolInput: json.RawMessage(`{"command":"*** Begin Patch\n-git push\n"}`)}, ""},
		{Input{Agent: AgentCodex, Event: EventPreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":["bash","-lc","git push"]}`)}, "git-push"},
		{Input{Agent: AgentCursor, Event: EventBeforeMCPExecution, ToolName: "slack_post_message", ToolInput: json.RawMessage(`{}`)}, "mcp-outbound"},
		{Input{Agent: AgentCursor, Event: EventBeforeMCPExecution, ToolName: "read_file", ToolInput: json.RawMessage(`{}`)}, ""},
		{parsed(`{"hook_event_name":"beforeShellExecution","conversation_id":"c","command":"npm publish"}`), "package-publish"},
	} {
		m := rs.Classify(c.in)
		got := ""
		if m != nil {
			got = m.Rule
		}
		if got != c.rule {
			t.Errorf("%s %s classified as %q, want %q", c.in.ToolName, c.in.Command, got, c.rule)
		}
	}
}

const (
	tableBegin = "<!-- builtin-rules:begin (generated by go test -run TestRulesDoc -update) -->"
	tableEnd   = "<!-- builtin-rules:end -->"
)

func rulesTable() string {
	var b strings.Builder
	b.WriteString("| rule | looks at | an effect when | e.g. | not |\n| --- | --- | --- | --- | --- |\n")
	code := func(xs []string) string {
		var out []string
		for _, x := range xs {
			out = append(out, "`"+strings.ReplaceAll(x, "|", `\|`)+"`")
		}
		return strings.Join(out, "<br>")
	}
	for _, r := range Builtins() {
		looks := "MCP tool names"
		if len(r.Programs) > 0 {
			looks = strings.Join(r.Programs, ", ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.Name, looks, r.Summary, code(r.Matches), code(r.NearMisses))
	}
	return b.String()
}

// TestRulesDoc keeps the table in RULES.md equal to the rules the code has.
func TestRulesDoc(t *testing.T) {
	doc, err := os.ReadFile("RULES.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("RULES.md lacks the markers %q and %q", tableBegin, tableEnd)
	}
	want := s[:i+len(tableBegin)] + "\n" + rulesTable() + s[j:]
	if want == s {
		return
	}
	if *update {
		if err := os.WriteFile("RULES.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("RULES.md's built-in rules table is out of date: run go test -run TestRulesDoc -update")
}
