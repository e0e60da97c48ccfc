package barrier

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// testGuard is a Guard over a fresh ledger with an in-memory Recorder, whose checkpoint is cp.
func testGuard(t *testing.T) (*Guard, *memRecorder, *int) {
	t.Helper()
	rec := &memRecorder{}
	dir := filepath.Join(t.TempDir(), ".rewind", "effects")
	opens := 0
	return &Guard{
		OpenLedger: func() (*Ledger, error) { opens++; return Open(dir, rec) },
		Checkpoint: func() (string, error) { return "cp-3", nil },
	}, rec, &opens
}

func TestGuardNonEffectNeverOpensTheLedger(t *testing.T) {
	g := &Guard{
		OpenLedger: func() (*Ledger, error) { t.Fatal("the ledger was opened for a non-effect"); return nil, nil },
		Checkpoint: func() (string, error) { t.Fatal("the checkpoint was read for a non-effect"); return "", nil },
	}
	for _, f := range []string{"claude-code/pretooluse-bash-ls.json", "codex/pretooluse-apply-patch.json", "cursor/beforeshellexecution-ls.json", "cursor/beforemcpexecution-object-input.json", "claude-code/sessionstart.json", "cursor/afterfileedit.json"} {
		o := g.Handle(fixture(t, f))
		if o.Err != nil || o.Action.Kind != ActNone || !o.Decision.Admitted {
			t.Errorf("%s: %+v", f, o)
		}
	}
}

func TestGuardClaudeCodeFlow(t *testing.T) {
	g, rec, _ := testGuard(t)
	pre := fixture(t, "claude-code/pretooluse-bash-git-push.json")

	o := g.Handle(pre)
	if o.Err != nil || o.Decision.Code != CodeAdmitted || o.Decision.State != Pending {
		t.Fatalf("first PreToolUse: %+v, %v", o.Decision, o.Err)
	}
	if o.Answer != (Answer{}) {
		t.Errorf("admitted answer %+v: must print nothing and exit 0 (an \"allow\" would skip the user's prompt)", o.Answer)
	}
	if o.Decision.Record.Checkpoint != "cp-3" || o.Decision.Record.Rule != "git-push" || o.Decision.Record.Source != "hook:claude-code" {
		t.Errorf("record %+v", o.Decision.Record)
	}
	key := o.Decision.Key

	o = g.Handle(fixture(t, "claude-code/posttooluse-bash.json"))
	if o.Err != nil || o.Decision.Code != CodeConfirmed || o.Answer != (Answer{}) {
		t.Fatalf("PostToolUse: %+v %+v %v", o.Decision, o.Answer, o.Err)
	}

	// The agent retries the same push, for example after a rewind, with another description.
	retry := strings.Replace(string(pre), "Push the release commit to origin", "Retry the push", 1)
	retry = strings.Replace(retry, "toolu_01ABC123git", "toolu_01RETRY", 1)
	o = g.Handle([]byte(retry))
	if o.Err != nil || o.Decision.Code != CodeSpent || o.Decision.Key != key {
		t.Fatalf("retry: %+v %v", o.Decision, o.Err)
	}
	if o.Answer.ExitCode != 2 || o.Answer.Stdout != "" || !strings.Contains(o.Answer.Stderr, key) || !strings.Contains(o.Answer.Stderr, "REWIND_EFFECT_KEY=") {
		t.Errorf("refusal answer %+v", o.Answer)
	}

	// A distinct new push, named by the agent, is admitted.
	named := strings.Replace(retry, `"git push origin main"`, `"REWIND_EFFECT_KEY=push-2 git push origin main"`, 1)
	o = g.Handle([]byte(named))
	if o.Err != nil || o.Decision.Code != CodeAdmitted || o.Decision.Key != "shell:push-2" {
		t.Fatalf("named push: %+v %v", o.Decision, o.Err)
	}
	if got := strings.Join(rec.kinds(), ","); got != "effect,confirm,refusal,effect" {
		t.Errorf("recorded %s", got)
	}
}

func TestGuardFailureAndDenial(t *testing.T) {
	g, rec, _ := testGuard(t)
	g.Handle(fixture(t, "claude-code/pretooluse-bash-git-push.json"))
	o := g.Handle(fixture(t, "claude-code/posttoolusefailure-bash.json"))
	if o.Err != nil || o.Decision.Code != CodeMarked || o.Answer != (Answer{}) {
		t.Fatalf("PostToolUseFailure: %+v %+v %v", o.Decision, o.Answer, o.Err)
	}
	o = g.Handle(fixture(t, "claude-code/pretooluse-bash-git-push.json"))
	if o.Decision.Code != CodeFailed || o.Answer.ExitCode != 2 || !strings.Contains(o.Answer.Stderr, "failed to push some refs") {
		t.Fatalf("after failure: %+v %+v", o.Decision, o.Answer)
	}

	g2, rec2, _ := testGuard(t)
	g2.Handle(fixture(t, "claude-code/pretooluse-bash-git-push.json"))
	o = g2.Handle(fixture(t, "claude-code/permissiondenied-bash.json"))
	if o.Err != nil || o.Decision.Code != CodeReleased || o.Answer != (Answer{}) {
		t.Fatalf("PermissionDenied: %+v %v", o.Decision, o.Err)
	}
	if r := o.Decision.Record; !strings.Contains(r.History[len(r.History)-1].Reason, "Auto mode denied") {
		t.Errorf("release reason %q", r.History[len(r.History)-1].Reason)
	}
	o = g2.Handle(fixture(t, "claude-code/pretooluse-bash-git-push.json"))
	if o.Decision.Code != CodeAdmitted || o.Decision.Record.Generation != 2 {
		t.Fatalf("after denial: %+v", o.Decision)
	}
	if got := strings.Join(rec.kinds(), ",") + " / " + strings.Join(rec2.kinds(), ","); got != "effect,failure,refusal / effect,release,effect" {
		t.Errorf("recorded %s", got)
	}
}

func TestGuardCodexFlow(t *testing.T) {
	g, _, _ := testGuard(t)
	o := g.Handle(fixture(t, "codex/pretooluse-bash-npm-publish.json"))
	if o.Decision.Code != CodeAdmitted || o.Decision.State != Pending || o.Decision.Record.Source != "hook:codex" || o.Answer != (Answer{}) {
		t.Fatalf("Codex PreToolUse: %+v %+v", o.Decision, o.Answer)
	}
	if o = g.Handle(fixture(t, "codex/posttooluse-bash.json")); o.Decision.Code != CodeConfirmed {
		t.Fatalf("Codex PostToolUse: %+v", o.Decision)
	}
	o = g.Handle(fixture(t, "codex/pretooluse-mcp.json"))
	if o.Decision.Code != CodeAdmitted || !strings.HasPrefix(o.Decision.Key, "mcp__stripe__create_refund:") || o.Decision.Record.Rule != "mcp-outbound" {
		t.Fatalf("Codex MCP: %+v", o.Decision)
	}
	o = g.Handle(fixture(t, "codex/pretooluse-bash-npm-publish.json"))
	if o.Decision.Code != CodeSpent || o.Answer.ExitCode != 2 {
		t.Fatalf("Codex retry: %+v %+v", o.Decision, o.Answer)
	}
}

func TestGuardCursorFlow(t *testing.T) {
	g, _, _ := testGuard(t)
	o := g.Handle(fixture(t, "cursor/beforeshellexecution-git-push.json"))
	if o.Decision.Code != CodeAdmitted || o.Decision.State != Spent {
		t.Fatalf("Cursor admission: %+v (Cursor has no confirmation channel: spent at once)", o.Decision)
	}
	if o.Answer != (Answer{Stdout: `{"permission":"allow"}` + "\n"}) {
		t.Errorf("allow answer %+v", o.Answer)
	}
	o = g.Handle(fixture(t, "cursor/beforeshellexecution-git-push.json"))
	var deny struct {
		Permission, UserMessage, AgentMessage string
	}
	if err := json.Unmarshal([]byte(o.Answer.Stdout), &struct {
		P *string `json:"permission"`
		U *string `json:"user_message"`
		A *string `json:"agent_message"`
	}{&deny.Permission, &deny.UserMessage, &deny.AgentMessage}); err != nil {
		t.Fatal(err)
	}
	if o.Answer.ExitCode != 0 || deny.Permission != "deny" || deny.AgentMessage != o.Decision.Reason || !strings.Contains(deny.UserMessage, "(spent)") {
		t.Errorf("deny answer %+v", o.Answer)
	}
	// The same push from Claude Code is the same effect: shell keys do not depend on the agent.
	o2 := g.Handle(fixture(t, "claude-code/pretooluse-bash-git-push.json"))
	if o2.Decision.Code != CodeSpent || o2.Decision.Key != o.Decision.Key {
		t.Errorf("cross-agent: %+v", o2.Decision)
	}
	o = g.Handle(fixture(t, "cursor/beforemcpexecution-string-input.json"))
	if o.Decision.Code != CodeAdmitted || !strings.HasPrefix(o.Decision.Key, "slack_post_message:") {
		t.Errorf("Cursor MCP: %+v", o.Decision)
	}
}

func TestGuardExplicit(t *testing.T) {
	g, _, _ := testGuard(t)
	o := g.Handle(fixture(t, "explicit/charge.json"))
	if o.Decision.Code != CodeAdmitted || o.Decision.State != Spent || o.Decision.Record.Source != "cli" || o.Answer != (Answer{}) {
		t.Fatalf("explicit: %+v %+v", o.Decision, o.Answer)
	}
	o = g.Handle([]byte(`{"key":"invoice-2026-0042-charge","payload":{"customer":"cus_Q1w2E3r4","amount":5900,"currency":"eur"}}`))
	if o.Decision.Code != CodePayloadMismatch || o.Answer.ExitCode != 2 || !strings.Contains(o.Answer.Stderr, `a new "key"`) {
		t.Errorf("explicit mismatch: %+v %+v", o.Decision, o.Answer)
	}
}

func TestGuardFailsClosed(t *testing.T) {
	broken := errors.New("disk on fire")
	g := &Guard{OpenLedger: func() (*Ledger, error) { return nil, broken }}
	o := g.Handle(fixture(t, "claude-code/pretooluse-bash-git-push.json"))
	if !errors.Is(o.Err, broken) || o.Answer.ExitCode != 2 || !strings.Contains(o.Answer.Stderr, "disk on fire") {
		t.Errorf("ledger error on an effect: %+v", o.Answer)
	}
	o = g.Handle(fixture(t, "cursor/beforeshellexecution-git-push.json"))
	if o.Answer.ExitCode != 0 || !strings.Contains(o.Answer.Stdout, `"permission":"deny"`) {
		t.Errorf("Cursor ledger error: %+v", o.Answer)
	}
	// A report that cannot be filed is a visible, non-blocking error.
	o = g.Handle(fixture(t, "claude-code/posttooluse-bash.json"))
	if o.Answer.ExitCode != 1 || !strings.Contains(o.Answer.Stderr, "disk on fire") {
		t.Errorf("report error: %+v", o.Answer)
	}

	_, rulesErr := ParseRules([]byte(`{"version": 1, "rules": [{"name": "x", "command": "("}]}`), ".rewind/effects.json")
	g = &Guard{RulesErr: rulesErr, OpenLedger: func() (*Ledger, error) { t.Fatal("opened"); return nil, nil }}
	o = g.Handle(fixture(t, "claude-code/pretooluse-bash-ls.json"))
	if o.Answer.ExitCode != 2 || !strings.Contains(o.Answer.Stderr, ".rewind/effects.json") {
		t.Errorf("bad rules file: %+v", o.Answer)
	}
	// Input the guard cannot read is refused (it may be a call about to run), and the message
	// names what the guard reads; a report it cannot read is a visible, non-blocking error.
	o = g.Handle([]byte("not json"))
	if o.Answer.ExitCode != 2 || !strings.Contains(o.Answer.Stderr, "could not read the hook input") || !strings.Contains(o.Answer.Stderr, "Windsurf (pre_run_command") {
		t.Errorf("unparsable input: %+v", o.Answer)
	}
	o = g.Handle([]byte(`{"hook_event_name": "PostToolUse", "tool_name": 7}`))
	if o.Answer.ExitCode != 1 || !strings.Contains(o.Answer.Stderr, "agent-rewind guard: guard input") {
		t.Errorf("unparsable report: %+v", o.Answer)
	}
	o = g.Handle([]byte(`{"agent_action_name": "pre_run_command", "tool_info": {}}`))
	if o.Answer.ExitCode != 2 || !strings.Contains(o.Answer.Stderr, "command_line") {
		t.Errorf("unparsable Windsurf decision: %+v", o.Answer)
	}
}

func TestPlanKeys(t *testing.T) {
	rs := DefaultRules()
	key := func(in Input) string {
		a, err := rs.Plan(in)
		if err != nil {
			t.Fatal(err)
		}
		return a.Request.Key
	}
	base := key(bashInput("git push origin main"))
	for _, same := range []string{"git  push   origin main", `git push "origin" 'main'`, "cd repo && git push origin main 2>&1 | tail -5", "/usr/bin/git push origin main", "sudo FOO=1 git push origin main"} {
		if k := key(bashInput(same)); k != base {
			t.Errorf("%q has key %s, want %s (same effect)", same, k, base)
		}
	}
	for _, other := range []string{"git push origin dev", "git push && npm publish"} {
		if k := key(bashInput(other)); k == base {
			t.Errorf("%q shares the key of git push origin main", other)
		}
	}
	if _, err := rs.Plan(bashInput("REWIND_EFFECT_KEY= git push")); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("empty REWIND_EFFECT_KEY: %v", err)
	}
	a, _ := rs.Plan(mcpInput("mcp__stripe__create_refund", `{"charge":"ch_1","amount":5}`))
	b, _ := rs.Plan(mcpInput("mcp__stripe__create_refund", `{ "amount": 5.0, "charge": "ch_1" }`))
	if a.Request.Key != b.Request.Key || !strings.HasPrefix(a.Request.Key, "mcp__stripe__create_refund:") {
		t.Errorf("MCP keys %s %s", a.Request.Key, b.Request.Key)
	}

	withFields, err := ParseRules([]byte(`{"version":1,"rules":[{"name":"s","tool":"^mcp__stripe__","key_fields":["idempotency_key","meta.order"]}]}`), "f")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := withFields.Plan(mcpInput("mcp__stripe__create_charge", `{"idempotency_key":"k1","amount":5,"meta":{"order":7}}`))
	y, _ := withFields.Plan(mcpInput("mcp__stripe__create_charge", `{"idempotency_key":"k1","amount":9,"meta":{"order":7}}`))
	if x.Request.Key != y.Request.Key || string(x.Request.Payload) == string(y.Request.Payload) {
		t.Errorf("key fields: keys %s %s payloads %s %s", x.Request.Key, y.Request.Key, x.Request.Payload, y.Request.Payload)
	}
}

func TestRespondTable(t *testing.T) {
	pre := Input{Agent: AgentClaudeCode, Event: EventPreToolUse}
	post := Input{Agent: AgentCodex, Event: EventPostToolUse}
	cur := Input{Agent: AgentCursor, Event: EventBeforeMCPExecution}
	refused := Decision{Code: CodePending, Key: "k", Reason: "why"}
	unreadable := &InputError{Msg: "bad"}
	jsonText := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	for _, c := range []struct {
		name string
		in   Input
		d    Decision
		err  error
		want Answer
	}{
		{"pre not effect", pre, Decision{Admitted: true, Code: CodeNotEffect}, nil, Answer{}},
		{"pre refused", pre, refused, nil, Answer{Stderr: "why\n", ExitCode: 2}},
		{"pre refusal not recorded", pre, refused, ErrNotRecorded, Answer{Stderr: "why\n", ExitCode: 2}},
		{"post ok", post, Decision{Admitted: true, Code: CodeConfirmed}, nil, Answer{}},
		{"post error", post, Decision{}, errors.New("x"), Answer{Stderr: "agent-rewind guard: codex PostToolUse: x\n", ExitCode: 1}},
		{"cursor allow", cur, Decision{Admitted: true, Code: CodeAdmitted}, nil, Answer{Stdout: "{\"permission\":\"allow\"}\n"}},
		{"cursor deny", cur, refused, nil, Answer{Stdout: `{"permission":"deny","user_message":"agent-rewind refused effect k (pending)","agent_message":"why"}` + "\n"}},
		{"cursor other event", Input{Agent: AgentCursor, Event: "stop"}, Decision{Admitted: true, Code: CodeNotHandled}, nil, Answer{Stdout: "{}\n"}},
		{"explicit refused", Input{Agent: AgentExplicit, Event: EventExplicit}, refused, nil, Answer{Stderr: "why\n", ExitCode: 2}},
		{"unparsed", Input{}, Decision{}, unreadable, Answer{Stderr: "agent-rewind guard refused this call: it could not read the hook input, so the call would run unrecorded: " + unreadable.Error() + "\n", ExitCode: 2}},
		{"unparsed report", Input{Event: EventAfterTool}, Decision{}, unreadable, Answer{Stderr: "agent-rewind guard: " + unreadable.Error() + "\n", ExitCode: 1}},
		{"unparsed, its client known", Input{Agent: AgentCline, Event: EventClineToolCall}, Decision{}, unreadable, Answer{Stdout: `{"cancel":true,"errorMessage":"agent-rewind refused this call: agent-rewind guard refused this call: it could not read the hook input, so the call would run unrecorded: ` + jsonText(unreadable.Error()) + `"}` + "\n"}},
		{"cline allow", Input{Agent: AgentCline, Event: EventPreToolUse}, Decision{Admitted: true, Code: CodeAdmitted}, nil, Answer{Stdout: `{"cancel":false}` + "\n"}},
		{"cline cancel", Input{Agent: AgentCline, Event: EventPreToolUse}, refused, nil, Answer{Stdout: `{"cancel":true,"errorMessage":"agent-rewind refused effect k (pending): why"}` + "\n"}},
		{"gemini allow", Input{Agent: AgentGemini, Event: EventBeforeTool}, Decision{Admitted: true, Code: CodeNotEffect}, nil, Answer{Stdout: "{}\n"}},
		{"gemini refused", Input{Agent: AgentGemini, Event: EventBeforeTool}, refused, nil, Answer{Stderr: "why\n", ExitCode: 2}},
		{"windsurf allow", Input{Agent: AgentWindsurf, Event: EventPreRunCommand}, Decision{Admitted: true, Code: CodeAdmitted}, nil, Answer{}},
		{"windsurf refused", Input{Agent: AgentWindsurf, Event: EventPreMCPToolUse}, refused, nil, Answer{Stderr: "why\n", ExitCode: 2}},
		{"vscode refused", Input{Agent: AgentVSCode, Event: EventPreToolUse}, refused, nil, Answer{Stdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"why"}}` + "\n"}},
		{"copilot allow", Input{Agent: AgentCopilot, Event: EventPreToolUse}, Decision{Admitted: true, Code: CodeNotEffect}, nil, Answer{}},
		{"copilot refused", Input{Agent: AgentCopilot, Event: EventPreToolUse}, refused, nil, Answer{Stdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"why"}}` + "\n"}},
		{"cline CLI shell refused", Input{Agent: AgentCline, Event: EventClineToolCall, ToolName: "run_commands"}, Decision{Code: CodeSpent, Key: "k", Reason: "it's spent"}, nil,
			Answer{Stdout: `{"cancel":false,"overrideInput":{"commands":["printf '%s\\n' 'it'\\''s spent' \u003e\u00262; exit 2"]}}` + "\n"}},
		{"cline CLI MCP refused", Input{Agent: AgentCline, Event: EventClineToolCall, ToolName: "mcp__slack__post", MCPTool: true}, refused, nil, Answer{Stdout: `{"cancel":true,"errorMessage":"agent-rewind refused effect k (pending): why"}` + "\n"}},
		{"cline CLI report", Input{Agent: AgentCline, Event: EventClineToolResult}, Decision{Admitted: true, Code: CodeConfirmed}, nil, Answer{Stdout: `{"cancel":false}` + "\n"}},
		{"cursor preToolUse deny", Input{Agent: AgentCursor, Event: EventCursorPreToolUse}, refused, nil, Answer{Stdout: `{"permission":"deny","user_message":"agent-rewind refused effect k (pending)","agent_message":"why"}` + "\n"}},
	} {
		if got := Respond(c.in, c.d, c.err); got != c.want {
			t.Errorf("%s: Respond = %+v, want %+v", c.name, got, c.want)
		}
	}
}
