package barrier

import (
	"encoding/json"
	"strings"
)

// Claude Code's hook events; Codex, VS Code and Copilot send the same names.
const (
	EventPreToolUse         = "PreToolUse"         // decide
	EventPostToolUse        = "PostToolUse"        // confirm
	EventPostToolUseFailure = "PostToolUseFailure" // mark failed
	EventPermissionDenied   = "PermissionDenied"   // release (auto mode)
	EventUserPromptSubmit   = "UserPromptSubmit"   // prompt (Claude Code and Codex CLI)
)

var claudeCode = &Client{
	Agent:       AgentClaudeCode,
	Name:        "Claude Code",
	EventMember: "hook_event_name",
	Events: []Event{
		{EventPreToolUse, RoleDecide}, {EventPostToolUse, RoleConfirm},
		{EventPostToolUseFailure, RoleFail}, {EventPermissionDenied, RoleRelease},
		{EventUserPromptSubmit, RolePrompt},
	},
	ShellTools: []string{"Bash", "PowerShell"},
	FileTools:  []string{"Edit", "Write", "MultiEdit", "NotebookEdit"},
	MCPNames:   "mcp__<server>__<tool>; a plugin's servers mcp__plugin_<plugin>_<server>__<tool>",
	CallID:     "tool_use_id",
	HookEnv:    "its own environment, with CLAUDE_PROJECT_DIR (the folder the session was started in) and, for a plugin's hooks, CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA",
	MCPEnv:     "its own environment, with CLAUDE_PROJECT_DIR; a user-scope plugin's server starts in the plugin cache",
	Answers: "exit 2 blocks the call and its stderr is the reason the model reads; exit 0 with no output lets it run (a JSON allow would skip the user's permission prompt); " +
		`other codes are errors that let it run, unless the hook has "onFailure": "block" (2.1.295 and later)`,
	SystemMessage: true,
	Checked:       "Claude Code 2.1.328 run against a mock model (issue 25); the hooks reference, code.claude.com/docs/en/hooks",
	claims:        func(f fields) bool { return f.has("hook_event_name") },
	parse: func(f fields) (Input, error) {
		in, err := parseClaudeShape(f, AgentClaudeCode)
		if err != nil {
			return in, err
		}
		if server, _, ok := cutMCPClaudeName(in.ToolName); ok {
			// A plugin's server: plugin_<plugin>_<server>, plugin names being kebab-case.
			if rest, plugin := strings.CutPrefix(server, "plugin_"); plugin {
				if _, s, ok := strings.Cut(rest, "_"); ok && s != "" {
					server = s
				}
			}
			in.MCPTool, in.MCPServer = true, server
		}
		return in, nil
	},
	allow:   silentAllow,
	refuse:  exitTwo,
	mcpName: mcpClaudeName,
}

// parseClaudeShape reads Claude Code's input shape, which Codex, Gemini CLI, Copilot and VS Code
// share (the event in the client's EventMember): session_id, transcript_path, cwd,
// permission_mode, hook_event_name, tool_name, tool_input,
// tool_use_id; tool_response after a call; error and is_interrupt after a failed call; reason
// after a denial.
func parseClaudeShape(f fields, agent Agent) (Input, error) {
	in := Input{Agent: agent}
	var err error
	for _, s := range []struct {
		name string
		dst  *string
	}{
		{ClientOf(agent).EventMember, &in.Event},
		{"session_id", &in.SessionID}, {"transcript_path", &in.TranscriptPath}, {"cwd", &in.Cwd},
		{"permission_mode", &in.PermissionMode}, {"model", &in.Model}, {"turn_id", &in.TurnID},
		{"tool_name", &in.ToolName}, {"tool_use_id", &in.ToolUseID}, {"reason", &in.Reason},
	} {
		if *s.dst, _, err = f.str(s.name); err != nil {
			return Input{Agent: agent, Event: in.Event}, err
		}
	}
	if ti, ok := f["tool_input"]; ok {
		in.ToolInput = append(json.RawMessage(nil), ti...)
	}
	if tr, ok := f["tool_response"]; ok {
		in.ToolResponse = append(json.RawMessage(nil), tr...)
	}
	in.Error = f.text("error")
	if in.Error == "" {
		in.Error = f.text("error_message")
	}
	if b, ok := f["is_interrupt"]; ok {
		_ = json.Unmarshal(b, &in.IsInterrupt) // advisory only: a wrong type means "not interrupted"
	}
	// A prompt event names no tool; it is still read whole, so the guard finds the folder
	// (cwd) as for the session's calls.
	if role := ClientOf(agent).Role(in.Event); in.ToolName == "" && role != "" && role != RolePrompt {
		return Input{Agent: agent, Event: in.Event}, inputErr("%s hook input without \"tool_name\"", in.Event)
	}
	return in, nil
}

// silentAllow is the answer of clients that read exit 0 with no output as "go ahead", and any
// output as a decision of their own.
func silentAllow(Input, bool) Answer { return Answer{} }

// exitTwo refuses with exit code 2 and the reason on stderr, which Claude Code, Codex, Gemini
// CLI and Windsurf read as "block, and tell the model why".
func exitTwo(_ Input, _, reason string) Answer {
	return Answer{Stderr: reason + "\n", ExitCode: 2}
}
