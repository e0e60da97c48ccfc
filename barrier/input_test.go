package barrier

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "hooks", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseFixtures parses every hook fixture (see testdata/hooks/SOURCES.md) and checks what
// the guard reads from it.
func TestParseFixtures(t *testing.T) {
	for _, c := range []struct {
		file, agent, event, tool, toolUseID string
		check                               func(t *testing.T, in Input)
	}{
		{"claude-code/pretooluse-bash-git-push.json", "claude-code", "PreToolUse", "Bash", "toolu_01ABC123git", func(t *testing.T, in Input) {
			if s, _, ok := in.ShellCommand(); !ok || s != "git push origin main" {
				t.Errorf("shell command %q %v", s, ok)
			}
			if in.SessionID != "abc123" || in.Cwd != "/Users/dev/shop" || in.PermissionMode != "default" || !strings.HasSuffix(in.TranscriptPath, ".jsonl") {
				t.Errorf("common fields %+v", in)
			}
		}},
		{"claude-code/pretooluse-bash-ls.json", "claude-code", "PreToolUse", "Bash", "toolu_01ABC123ls", nil},
		{"claude-code/pretooluse-mcp-slack.json", "claude-code", "PreToolUse", "mcp__slack__slack_post_message", "toolu_01ABC123mcp", func(t *testing.T, in Input) {
			if _, _, ok := in.ShellCommand(); ok {
				t.Error("an MCP call read as a shell call")
			}
		}},
		{"claude-code/posttooluse-bash.json", "claude-code", "PostToolUse", "Bash", "toolu_01ABC123git", func(t *testing.T, in Input) {
			if !strings.Contains(string(in.ToolResponse), "main -> main") {
				t.Errorf("tool_response %s", in.ToolResponse)
			}
		}},
		{"claude-code/posttoolusefailure-bash.json", "claude-code", "PostToolUseFailure", "Bash", "toolu_01ABC123git", func(t *testing.T, in Input) {
			if !strings.HasPrefix(in.Error, "Exit code 1\n") || in.IsInterrupt {
				t.Errorf("error %q interrupt %v", in.Error, in.IsInterrupt)
			}
		}},
		{"claude-code/permissiondenied-bash.json", "claude-code", "PermissionDenied", "Bash", "toolu_01ABC123git", func(t *testing.T, in Input) {
			if !strings.HasPrefix(in.Reason, "Auto mode denied") || in.PermissionMode != "auto" {
				t.Errorf("reason %q mode %q", in.Reason, in.PermissionMode)
			}
		}},
		{"claude-code/sessionstart.json", "claude-code", "SessionStart", "", "", nil},
		{"codex/pretooluse-bash-npm-publish.json", "codex", "PreToolUse", "Bash", "call_Hx3k9PqL2mVn8RtY", func(t *testing.T, in Input) {
			if in.TurnID == "" || in.Model != "gpt-5-codex" {
				t.Errorf("codex fields %+v", in)
			}
		}},
		{"codex/pretooluse-apply-patch.json", "codex", "PreToolUse", "apply_patch", "call_Ap9Lm2Qw7Zx4Vb1N", func(t *testing.T, in Input) {
			if in.TranscriptPath != "" {
				t.Errorf("null transcript_path read as %q", in.TranscriptPath)
			}
		}},
		{"codex/pretooluse-mcp.json", "codex", "PreToolUse", "mcp__stripe__create_refund", "call_Rf5Tg8Yh1Uj4Ik7O", nil},
		{"codex/posttooluse-bash.json", "codex", "PostToolUse", "Bash", "call_Hx3k9PqL2mVn8RtY", nil},
		{"cursor/beforeshellexecution-git-push.json", "cursor", "beforeShellExecution", "Shell", "", func(t *testing.T, in Input) {
			if in.Command != "git push origin main" || in.SessionID == "" || len(in.WorkspaceRoots) != 1 {
				t.Errorf("cursor fields %+v", in)
			}
		}},
		{"cursor/beforeshellexecution-ls.json", "cursor", "beforeShellExecution", "Shell", "", nil},
		{"cursor/beforemcpexecution-string-input.json", "cursor", "beforeMCPExecution", "slack_post_message", "", func(t *testing.T, in Input) {
			if string(in.ToolInput) != `{"channel_id":"C0123456789","text":"Release v1.4.0 is live"}` {
				t.Errorf("string tool_input not decoded: %s", in.ToolInput)
			}
		}},
		{"cursor/beforemcpexecution-object-input.json", "cursor", "beforeMCPExecution", "database_query", "", func(t *testing.T, in Input) {
			if !strings.Contains(string(in.ToolInput), `"query"`) || in.ServerURL != "http://localhost:3000" {
				t.Errorf("object tool_input %s url %q", in.ToolInput, in.ServerURL)
			}
		}},
		{"cursor/afterfileedit.json", "cursor", "afterFileEdit", "", "", nil},
		{"explicit/charge.json", "explicit", "explicit", "", "", func(t *testing.T, in Input) {
			if in.Key != "invoice-2026-0042-charge" || !strings.Contains(string(in.Payload), "4900") || in.Description == "" {
				t.Errorf("explicit %+v", in)
			}
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			in, err := ParseHookInput(fixture(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if string(in.Agent) != c.agent || in.Event != c.event || in.ToolName != c.tool || in.ToolUseID != c.toolUseID {
				t.Errorf("read %s %s %s %s, want %s %s %s %s", in.Agent, in.Event, in.ToolName, in.ToolUseID, c.agent, c.event, c.tool, c.toolUseID)
			}
			if c.check != nil {
				c.check(t, in)
			}
		})
	}
}

// parsed is the Input ParseHookInput reads from s, which must parse.
func parsed(s string) Input {
	in, err := ParseHookInput([]byte(s))
	if err != nil {
		panic(err)
	}
	return in
}

func TestParseHookInputErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"  \n", "empty"},
		{`["key"]`, "does not start with '{'"},
		{`{"key": "a"`, "not valid JSON"},
		{`{"tool_name": "Bash"}`, `neither "key"`},
		{`{"hook_event_name": 3}`, `"hook_event_name" must be a string`},
		{`{"hook_event_name": ""}`, "empty"},
		{`{"hook_event_name": "PreToolUse", "tool_input": {}}`, `without "tool_name"`},
		{`{"hook_event_name": "PreToolUse", "tool_name": ["Bash"]}`, `"tool_name" must be a string`},
		{`{"hook_event_name": "beforeShellExecution", "cwd": "/x"}`, `without "command"`},
		{`{"hook_event_name": "beforeMCPExecution", "conversation_id": "c"}`, `without "tool_name"`},
		{`{"key": "k", "payloads": {}}`, `unknown member "payloads"`},
		{`{"key": 5}`, `"key" must be a string`},
	} {
		_, err := ParseHookInput([]byte(c.in))
		var ie *InputError
		if !errors.Is(err, ErrUnknownInput) || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseHookInput(%q) = %v, want an InputError mentioning %q", c.in, err, c.want)
		}
	}
	if _, err := ParseHookInput([]byte(`{"key": ""}`)); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("empty explicit key: %v", err)
	}
	big := make([]byte, MaxInputSize+1)
	if _, err := ParseHookInput(big); !errors.Is(err, ErrUnknownInput) {
		t.Errorf("oversized input: %v", err)
	}
}

func TestParseLenientOnAdvisoryFields(t *testing.T) {
	in, err := ParseHookInput([]byte(`{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_use_id":"t","error":{"code":1},"is_interrupt":"yes","extra":[1,2]}`))
	if err != nil {
		t.Fatal(err)
	}
	if in.Error != `{"code":1}` || in.IsInterrupt {
		t.Errorf("error %q interrupt %v", in.Error, in.IsInterrupt)
	}
}

// FuzzParseHookInput checks that no input panics the parser, the planner, the guard or the
// answer, and that every answer follows its agent's protocol.
func FuzzParseHookInput(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "hooks"))
	for _, d := range entries {
		if !d.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join("testdata", "hooks", d.Name()))
		for _, file := range files {
			f.Add(fixture(f, filepath.Join(d.Name(), file.Name())))
		}
	}
	f.Add([]byte(`{"key":"k","payload":[1,{"a":null}]}`))
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["bash","-c","git push"]}}`))
	g := &Guard{OpenLedger: func() (*Ledger, error) { return nil, errors.New("no ledger while fuzzing") }}
	f.Fuzz(func(t *testing.T, data []byte) {
		o := g.Handle(data)
		a := o.Answer
		var unread *InputError
		if errors.As(o.Err, &unread) && IsDecidingEvent(o.Input.Event) && (o.Input.Client() == nil || o.Input.Client().Role(o.Input.Event) != RoleReport) {
			// Unreadable input before a call is refused in its client's protocol: never allowed silently.
			if !refusal(o.Input, a) {
				t.Fatalf("unparsed %s input answered %+v", o.Input.Agent, a)
			}
			return
		}
		if o.Err != nil && a.ExitCode == 1 {
			if a.Stdout != "" || a.Stderr == "" || o.Input.Deciding() {
				t.Fatalf("exit 1 is for an error of a report, with the error on stderr: %+v", a)
			}
			return
		}
		switch o.Input.Agent {
		case AgentCursor, AgentCline, AgentVSCode, AgentCopilot:
			// JSON answers, exit 0 (VS Code and Copilot: or nothing when the call may run).
			if a.ExitCode != 0 || a.Stderr != "" || (a.Stdout != "" && !json.Valid([]byte(a.Stdout))) ||
				(a.Stdout == "" && o.Input.Agent != AgentVSCode && o.Input.Agent != AgentCopilot) {
				t.Fatalf("%s answer is not its JSON: %+v", o.Input.Agent, a)
			}
		default:
			if a.ExitCode != 0 && a.ExitCode != 2 {
				t.Fatalf("exit code %d", a.ExitCode)
			}
			if a.ExitCode == 2 && (a.Stderr == "" || a.Stdout != "") {
				t.Fatalf("refusal without a reason on stderr: %+v", a)
			}
		}
		if o.Decision.Refused() != refusal(o.Input, a) && o.Err == nil {
			t.Fatalf("decision refused %v, answer %+v", o.Decision.Refused(), a)
		}
	})
}

// refusal reports whether a is a refusal in the protocol of in's client.
func refusal(in Input, a Answer) bool {
	var out map[string]any
	_ = json.Unmarshal([]byte(a.Stdout), &out)
	switch in.Agent {
	case AgentCursor:
		return a.ExitCode == 0 && out["permission"] == "deny"
	case AgentCline:
		_, override := out["overrideInput"]
		return a.ExitCode == 0 && (out["cancel"] == true || override)
	case AgentVSCode, AgentCopilot:
		hso, _ := out["hookSpecificOutput"].(map[string]any)
		return a.ExitCode == 0 && hso["permissionDecision"] == "deny" && hso["permissionDecisionReason"] != ""
	}
	return a.ExitCode == 2 && a.Stderr != "" && a.Stdout == ""
}
