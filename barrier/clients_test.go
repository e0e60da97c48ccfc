package barrier

import (
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
