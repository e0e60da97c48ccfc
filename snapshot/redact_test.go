package snapshot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestRedactSecrets(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`curl -H "Authorization: Bearer sk-ant-api03-abcdefghijklmnop" https://api.example.com`, `curl -H "Authorization: Bearer ***" https://api.example.com`},
		{`curl -H 'X-Api-Key: 0123456789abcdef' -H 'Accept: json' x`, `curl -H 'X-Api-Key: ***' -H 'Accept: json' x`},
		{`curl -H "Cookie: session=abc" x`, `curl -H "Cookie: ***" x`},
		{`export API_KEY=abc123 && make`, `export API_KEY=*** && make`},
		{`GITHUB_TOKEN=ghx123 gh pr list`, `GITHUB_TOKEN=*** gh pr list`},
		{`psql --password hunter2 -h db`, `psql --password *** -h db`},
		{`tool --api-key=abc --client-secret s3cr3t --verbose`, `tool --api-key=*** --client-secret *** --verbose`},
		{`git clone https://alice:hunter2@github.com/x/y.git`, `git clone https://alice:***@github.com/x/y.git`},
		{`curl -u alice:hunter2 https://h/`, `curl -u alice:*** https://h/`},
		{`curl "https://h/api?access_token=abc&page=2"`, `curl "https://h/api?access_token=***&page=2"`},
		{`echo sk-proj-abcdefghijklmnopqrstuvwxyz | pbcopy`, `echo sk-*** | pbcopy`},
		{`aws s3 ls --profile x AKIAABCDEFGHIJKLMNOP`, `aws s3 ls --profile x AKIA***`},
		{`git push https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x`, `git push https://ghp_***@github.com/x`},
		{`jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig`, `jwt=eyJ***`},
		// Left alone: ordinary commands, and words that only look like a prefix.
		{`go test ./... 2>&1 | tail -20`, `go test ./... 2>&1 | tail -20`},
		{`pip install scikit-learn sk-learn && npm run task-runner`, `pip install scikit-learn sk-learn && npm run task-runner`},
		{`git -c user.name=x commit --author="A <a@b>" -m "fix auth"`, `git -c user.name=x commit --author="A <a@b>" -m "fix auth"`},
		{`npm token list`, `npm token list`},
		{`  spaced   out  `, `spaced out`},
	} {
		if got := redactSecrets(c.in); got != c.want {
			t.Errorf("redactSecrets(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// FuzzRedactSecrets: any input is redacted without panicking, into valid UTF-8 when it was,
// and redacting again changes nothing; a secret given as a variable or flag never survives.
func FuzzRedactSecrets(f *testing.F) {
	for _, s := range []string{`curl -H "Authorization: Bearer sk-abcdefghijklmnop"`, `export API_KEY=x`, `--password x`,
		`https://u:p@h/?token=t&a=b`, `-u a:b`, `ghp_aaaaaaaaaaaaaaaaaaaa`, `Bearer`, `"':`, `a=&?=`} {
		f.Add(s, "hunter2")
	}
	f.Fuzz(func(t *testing.T, s, secret string) {
		out := redactSecrets(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("redactSecrets(%q) = %q: not valid UTF-8", s, out)
		}
		if again := redactSecrets(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		secret = strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) || r == '"' || r == '\'' || r == ',' || r == '*' || r == utf8.RuneError {
				return -1
			}
			return r
		}, secret)
		if secret == "" {
			return
		}
		for _, c := range []struct {
			cmd  string
			last int // which word from the end holds the value
			want string
		}{
			{"export API_KEY=" + secret, 1, "API_KEY=***"},
			{"tool --password " + secret + " x", 2, "***"},
			{"tool --token=" + secret, 1, "--token=***"},
		} {
			words := strings.Fields(redactSecrets(s + " " + c.cmd))
			if got := words[len(words)-c.last]; got != c.want {
				t.Fatalf("redactSecrets(%q): %q where %q belongs", s+" "+c.cmd, got, c.want)
			}
		}
	})
}

// TestAutoCheckpointRedactsSummary: a secret typed into a command reaches neither the
// checkpoint's label, its chain entry, nor calls.jsonl.
func TestAutoCheckpointRedactsSummary(t *testing.T) {
	root := t.TempDir()
	log := &chainLog{}
	s := mustOpen(t, root, Options{Recorder: log})
	put(t, root, "a.txt", "one", 0o644)
	const secret = "sk-ant-api03-secretsecretsecret"
	cmd := `curl -H "Authorization: Bearer ` + secret + `" https://api.example.com`
	res, err := s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_1", Tool: "Bash", Summary: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `Bash: curl -H "Authorization: Bearer ***" https://api.example.com`; res.Label != want {
		t.Fatalf("label %q, want %q", res.Label, want)
	}
	calls, err := os.ReadFile(filepath.Join(s.StateDir(), callsFile))
	if err != nil {
		t.Fatal(err)
	}
	chain, _ := json.Marshal(log.entries)
	for what, b := range map[string][]byte{"calls.jsonl": calls, "the chain": chain, "the label": []byte(res.Label + res.Call.Summary)} {
		if strings.Contains(string(b), "secretsecret") {
			t.Errorf("%s holds the secret: %s", what, b)
		}
	}
}
