package barrier

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestClientFixtures reads each client's hook fixtures (testdata/hooks/SOURCES.md): the agent
// recognised, the event, the tool named as the rules see it, the rule that classifies it, the
// folder the input names, and what the guard plans to do.
func TestClientFixtures(t *testing.T) {
	rs := DefaultRules()
	for _, c := range []struct {
		file        string
		agent       Agent
		event, tool string
		rule        string
		kind        ActionKind
		confirmable bool
		folder      string
	}{
		{"claude-code/pretooluse-powershell-git-push.json", AgentClaudeCode, "PreToolUse", "PowerShell", "git-push", ActAdmit, true, "/Users/dev/shop"},
		{"cursor/pretooluse-shell-git-push.json", AgentCursor, "preToolUse", "Shell", "git-push", ActAdmit, true, "/Users/dev/shop"},
		{"cursor/pretooluse-mcp-prefixed.json", AgentCursor, "preToolUse", "slack_post_message", "mcp-outbound", ActAdmit, true, "/Users/dev/shop"},
		{"cursor/posttooluse-shell.json", AgentCursor, "postToolUse", "Shell", "", ActConfirm, false, "/Users/dev/shop"},
		{"cursor/posttoolusefailure-shell.json", AgentCursor, "postToolUseFailure", "Shell", "", ActFail, false, "/Users/dev/shop"},
		{"cline/pretooluse-execute-command-git-push.json", AgentCline, "PreToolUse", "execute_command", "git-push", ActAdmit, false, "/Users/dev/shop"},
		{"cline/pretooluse-use-mcp-tool-slack.json", AgentCline, "PreToolUse", "mcp__slack__slack_post_message", "mcp-outbound", ActAdmit, false, "/Users/dev/shop"},
		{"cline/pretooluse-read-file.json", AgentCline, "PreToolUse", "read_file", "", ActNone, false, "/Users/dev/shop"},
		{"cline/posttooluse-execute-command.json", AgentCline, "PostToolUse", "execute_command", "", ActNone, false, "/Users/dev/shop"},
		{"windsurf/pre-run-command-git-push.json", AgentWindsurf, "pre_run_command", "run_command", "git-push", ActAdmit, false, "/Users/dev/shop"},
		{"windsurf/pre-run-command-ls.json", AgentWindsurf, "pre_run_command", "run_command", "", ActNone, false, "/Users/dev/shop"},
		{"windsurf/pre-mcp-tool-use-slack.json", AgentWindsurf, "pre_mcp_tool_use", "mcp__slack__slack_post_message", "mcp-outbound", ActAdmit, false, ""},
		{"windsurf/post-run-command.json", AgentWindsurf, "post_run_command", "run_command", "", ActNone, false, "/Users/dev/shop"},
		{"gemini-cli/beforetool-shell-git-push.json", AgentGemini, "BeforeTool", "run_shell_command", "git-push", ActAdmit, false, "/Users/dev/shop"},
		{"gemini-cli/beforetool-mcp-slack.json", AgentGemini, "BeforeTool", "mcp__slack__slack_post_message", "mcp-outbound", ActAdmit, false, "/Users/dev/shop"},
		{"gemini-cli/aftertool-shell.json", AgentGemini, "AfterTool", "run_shell_command", "", ActNone, false, "/Users/dev/shop"},
		{"vscode/pretooluse-run-in-terminal-git-push.json", AgentVSCode, "PreToolUse", "run_in_terminal", "git-push", ActAdmit, true, "/Users/dev/shop"},
		{"vscode/posttooluse-run-in-terminal.json", AgentVSCode, "PostToolUse", "run_in_terminal", "", ActConfirm, false, "/Users/dev/shop"},
		// Captured from the real clients (SOURCES.md).
		{"cline/real-3.0.65-tool_call-run_commands-git-push.json", AgentCline, "tool_call", "run_commands", "git-push", ActAdmit, true, "/Users/dev/shop"},
		{"cline/real-3.0.65-tool_result-run_commands-git-push.json", AgentCline, "tool_result", "run_commands", "", ActConfirm, false, "/Users/dev/shop"},
		{"cline/real-3.0.65-tool_call-editor.json", AgentCline, "tool_call", "editor", "", ActNone, false, "/Users/dev/shop"},
		{"cline/real-3.0.65-tool_call-mcp-agent-rewind-checkpoint.json", AgentCline, "tool_call", "mcp__agent-rewind__checkpoint", "", ActNone, false, "/Users/dev/shop"},
		{"cline/real-3.0.65-tool_result-mcp-agent-rewind-checkpoint.json", AgentCline, "tool_result", "mcp__agent-rewind__checkpoint", "", ActConfirm, false, "/Users/dev/shop"},
		{"cline/tool_call-mcp-slack.json", AgentCline, "tool_call", "mcp__slack__slack_post_message", "mcp-outbound", ActAdmit, true, "/Users/dev/shop"},
		{"copilot/pretooluse-bash-git-push.json", AgentCopilot, "PreToolUse", "Bash", "git-push", ActAdmit, false, "/Users/dev/shop"},
		{"copilot/posttooluse-bash.json", AgentCopilot, "PostToolUse", "Bash", "", ActNone, false, "/Users/dev/shop"},
		{"copilot/pretooluse-write.json", AgentCopilot, "PreToolUse", "Write", "", ActNone, false, "/Users/dev/shop"},
		{"copilot/pretooluse-mcp-agent-rewind.json", AgentCopilot, "PreToolUse", "mcp__agent-rewind__checkpoint", "", ActNone, false, "/Users/dev/shop"},
		{"copilot/pretooluse-mcp-slack.json", AgentCopilot, "PreToolUse", "mcp__slack__slack_post_message", "mcp-outbound", ActAdmit, false, "/Users/dev/shop"},
		{"codex/real-0.169.0-pretooluse-bash-git-push.json", AgentCodex, "PreToolUse", "Bash", "git-push", ActAdmit, true, "/Users/dev/shop"},
		{"codex/real-0.169.0-posttooluse-bash-git-push.json", AgentCodex, "PostToolUse", "Bash", "", ActConfirm, false, "/Users/dev/shop"},
		{"codex/real-0.169.0-pretooluse-mcp-agent-rewind-checkpoint.json", AgentCodex, "PreToolUse", "mcp__agent_rewind__checkpoint", "", ActNone, false, "/Users/dev/shop"},
		{"gemini-cli/real-0.61.0-beforetool-shell-git-push.json", AgentGemini, "BeforeTool", "run_shell_command", "git-push", ActAdmit, false, "/tmp/agents-2012147815/shop"},
		{"gemini-cli/real-0.61.0-beforetool-write-file.json", AgentGemini, "BeforeTool", "write_file", "", ActNone, false, "/Users/dev/shop"},
		{"gemini-cli/real-0.61.0-beforetool-mcp-agent-rewind-checkpoint.json", AgentGemini, "BeforeTool", "mcp__agent-rewind__checkpoint", "", ActNone, false, "/tmp/agents-2012147815/shop"},
		{"gemini-cli/beforetool-mcp-context-slack.json", AgentGemini, "BeforeTool", "mcp__slack__slack_post_message", "mcp-outbound", ActAdmit, false, "/Users/dev/shop"},
		// A prompt: read whole (its folder, as for the calls), nothing to decide.
		{"gemini-cli/real-0.61.0-beforeagent.json", AgentGemini, "BeforeAgent", "", "", ActNone, false, "/tmp/agents-3375902693/shop"},
	} {
		in, err := ParseHookInput(fixture(t, c.file))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if in.Agent != c.agent || in.Event != c.event || in.ToolName != c.tool || in.Folder() != c.folder {
			t.Errorf("%s: agent %q event %q tool %q folder %q", c.file, in.Agent, in.Event, in.ToolName, in.Folder())
		}
		if IsDecidingEvent(in.Event) {
			rule := ""
			if m := rs.Classify(in); m != nil {
				rule = m.Rule
			}
			if rule != c.rule {
				t.Errorf("%s: classified %q, want %q", c.file, rule, c.rule)
			}
		}
		a, err := rs.Plan(in)
		if err != nil || a.Kind != c.kind || a.Request.Confirmable != c.confirmable {
			t.Errorf("%s: plan %s confirmable %v (%v), want %s %v", c.file, a.Kind, a.Request.Confirmable, err, c.kind, c.confirmable)
		}
	}
}

// The same effect reaches the same key whichever client asks: a push refused after Claude Code
// ran it is refused in Cursor, Cline, Windsurf, Gemini CLI and VS Code too.
func TestClientsShareKeys(t *testing.T) {
	rs := DefaultRules()
	want := ""
	for _, f := range []string{
		"claude-code/pretooluse-bash-git-push.json", "claude-code/pretooluse-powershell-git-push.json",
		"cursor/beforeshellexecution-git-push.json", "cursor/pretooluse-shell-git-push.json",
		"cline/pretooluse-execute-command-git-push.json", "windsurf/pre-run-command-git-push.json",
		"gemini-cli/beforetool-shell-git-push.json", "vscode/pretooluse-run-in-terminal-git-push.json",
		"cline/real-3.0.65-tool_call-run_commands-git-push.json", "copilot/pretooluse-bash-git-push.json", "codex/real-0.169.0-pretooluse-bash-git-push.json",
	} {
		in, err := ParseHookInput(fixture(t, f))
		if err != nil {
			t.Fatal(err)
		}
		a, err := rs.Plan(in)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			want = a.Request.Key
		}
		if a.Request.Key != want {
			t.Errorf("%s: key %q, want %q", f, a.Request.Key, want)
		}
	}
}

// One MCP effect has one key whichever client names it, however each client spells MCP tools:
// the key Claude Code's call of the same tool with the same arguments gets.
func TestClientsShareMCPKeys(t *testing.T) {
	rs := DefaultRules()
	for _, f := range []string{
		"claude-code/pretooluse-mcp-slack.json", "cline/pretooluse-use-mcp-tool-slack.json", "cline/tool_call-mcp-slack.json",
		"windsurf/pre-mcp-tool-use-slack.json", "gemini-cli/beforetool-mcp-slack.json", "gemini-cli/beforetool-mcp-context-slack.json",
		"copilot/pretooluse-mcp-slack.json",
	} {
		in, err := ParseHookInput(fixture(t, f))
		if err != nil {
			t.Fatal(err)
		}
		a, err := rs.Plan(in)
		if err != nil || a.Kind != ActAdmit {
			t.Fatalf("%s: %+v %v", f, a, err)
		}
		claude, _ := rs.Plan(Input{Agent: AgentClaudeCode, Event: EventPreToolUse, ToolName: "mcp__slack__slack_post_message", ToolInput: in.ToolInput, ToolUseID: "t"})
		if a.Request.Key != claude.Request.Key || in.MCPServer != "slack" || in.MCPToolName() != "slack_post_message" {
			t.Errorf("%s: key %q, want Claude Code's %q; server %q tool %q", f, a.Request.Key, claude.Request.Key, in.MCPServer, in.MCPToolName())
		}
	}
}

// Each client's MCP name for agent-rewind's own tools parses back to the server and the tool,
// spelled as the client spells them (FromServer), from the payloads the real clients sent.
func TestOwnServerFromCapturedPayloads(t *testing.T) {
	for _, f := range []string{
		"cline/real-3.0.65-tool_call-mcp-agent-rewind-checkpoint.json", "copilot/pretooluse-mcp-agent-rewind.json",
		"codex/real-0.169.0-pretooluse-mcp-agent-rewind-checkpoint.json", "gemini-cli/real-0.61.0-beforetool-mcp-agent-rewind-checkpoint.json",
	} {
		in, err := ParseHookInput(fixture(t, f))
		if err != nil {
			t.Fatal(err)
		}
		if !in.MCPTool || !in.FromServer("agent-rewind") || in.FromServer("rewind") || in.MCPToolName() != "checkpoint" {
			t.Errorf("%s: MCP %v server %q tool %q, FromServer(agent-rewind) %v", f, in.MCPTool, in.MCPServer, in.MCPToolName(), in.FromServer("agent-rewind"))
		}
	}
	plugin := Input{Agent: AgentClaudeCode, Event: EventPreToolUse}
	if in, err := ParseHookInput([]byte(`{"hook_event_name":"PreToolUse","tool_name":"mcp__plugin_agent-rewind_agent-rewind__rewind","tool_input":{},"tool_use_id":"t"}`)); err != nil || !in.FromServer("agent-rewind") || in.MCPToolName() != "rewind" {
		t.Errorf("Claude Code plugin server: %+v %v", in, err)
	}
	if plugin.FromServer("agent-rewind") {
		t.Error("a call that is no MCP call is from a server")
	}
}

// Every client's MCP naming scheme, as MCPToolName writes it, reads back as the same server and
// tool (Cursor's bare names aside: they carry no server).
func TestMCPNamesRoundTrip(t *testing.T) {
	for _, c := range Clients() {
		name := c.MCPToolName("agent-rewind", "guard_effect")
		var raw string
		switch c.Agent {
		case AgentCline:
			raw = `{"hookName":"tool_call","taskId":"t","tool_call":{"id":"c1","name":` + jsonString(name) + `,"input":{}}}`
		case AgentWindsurf:
			raw = `{"agent_action_name":"pre_mcp_tool_use","tool_info":{"mcp_server_name":"agent-rewind","mcp_tool_name":"guard_effect"}}`
		case AgentVSCode:
			raw = `{"hookEventName":"PreToolUse","tool_name":` + jsonString(name) + `,"tool_input":{}}`
		case AgentCursor:
			raw = `{"hook_event_name":"preToolUse","conversation_id":"c","tool_name":` + jsonString(name) + `,"tool_input":{}}`
		default:
			event := c.EventsOf(RoleDecide)[0]
			extra := map[Agent]string{AgentCodex: `"turn_id":"u",`, AgentCopilot: `"timestamp":"2026-12-02T00:00:00Z",`}[c.Agent]
			raw = `{"hook_event_name":"` + event + `",` + extra + `"tool_name":` + jsonString(name) + `,"tool_input":{}}`
		}
		in, err := ParseHookInput([]byte(raw))
		if err != nil || in.Agent != c.Agent {
			t.Errorf("%s: %s read as %s (%v)", c.Name, raw, in.Agent, err)
			continue
		}
		if !in.MCPTool || in.MCPToolName() != "guard_effect" || (c.Agent != AgentCursor && !in.FromServer("agent-rewind")) {
			t.Errorf("%s: %q read as MCP %v server %q tool %q", c.Name, name, in.MCPTool, in.MCPServer, in.MCPToolName())
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestFolder(t *testing.T) {
	for _, c := range []struct {
		in   Input
		want string
	}{
		{Input{Cwd: "/w/a/sub", WorkspaceRoots: []string{"/w/b", "/w/a"}}, "/w/a"},
		{Input{Cwd: "/elsewhere", WorkspaceRoots: []string{"/w/b", "/w/a"}}, "/w/b"},
		{Input{Cwd: "/w/ab", WorkspaceRoots: []string{"/w/a"}}, "/w/a"},
		{Input{Cwd: "/w/x"}, "/w/x"},
		{Input{}, ""},
	} {
		if got := c.in.Folder(); got != c.want {
			t.Errorf("%+v: Folder %q, want %q", c.in, got, c.want)
		}
	}
}

// HOOKS.md's tables name every event of every client, and every client's MCP naming.
func TestHooksDocNamesEveryEvent(t *testing.T) {
	b, err := os.ReadFile("HOOKS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range Clients() {
		if !strings.Contains(doc, "| "+c.Name) {
			t.Errorf("HOOKS.md has no row for %s", c.Name)
		}
		for _, e := range c.Events {
			if !strings.Contains(doc, "`"+e.Name+"`") {
				t.Errorf("HOOKS.md does not name %s's event %s", c.Name, e.Name)
			}
		}
	}
}
