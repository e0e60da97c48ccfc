package barrier

import "strings"

// GitHub Copilot's hooks (its CLI, and VS Code sessions run by the Copilot harness) are the
// files of .github/hooks/*.json, shared with VS Code. An event configured in PascalCase
// (PreToolUse) gets Claude Code's snake_case input with an ISO timestamp and Claude Code's
// tool names (Bash, Write, Edit), but no transcript_path and no tool_use_id (1.0.102); an event configured
// in camelCase (preToolUse) gets {"toolName", "toolArgs"} with no event name, which the guard
// does not read.
var copilot = &Client{
	Agent:       AgentCopilot,
	Name:        "GitHub Copilot",
	EventMember: "hook_event_name",
	Events:      []Event{{EventPreToolUse, RoleDecide}, {EventPostToolUse, RoleReport}},
	ShellTools:  []string{"Bash"},
	FileTools:   []string{"Write", "Edit"},
	MCPNames:    "<server>-<tool> (read with the server up to the last -)",
	CallID:      "",
	HookEnv:     "its own environment, with COPILOT_PROJECT_DIR, CLAUDE_PROJECT_DIR (the project), COPILOT_HOOK_DIR and COPILOT_CLI=1; hooks run in the project",
	MCPEnv: "its own environment (REWIND_STATE_DIR and XDG_STATE_HOME pass); servers of .mcp.json or .github/mcp.json (not .vscode/mcp.json) start in the project, " +
		"in a trusted folder only",
	Answers: `exit 0 with {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason"}} (or a top-level permissionDecision) refuses and the model reads the reason; ` +
		`exit 2 refuses and the model reads only "hook exited with code 2"; any other non-zero exit refuses ("hook errored"); exit 0 with text that is not JSON lets the call run; ` +
		"hooks run in a trusted folder only (--trust-folder, or trusting it once)",
	Checked: "GitHub Copilot CLI 1.0.102 (npm @github/copilot) run against a mock model (payloads and answers captured 2026-12-02)",
	// Claude Code sends no timestamp and always a transcript_path; Cursor, Gemini CLI and Codex
	// claim theirs first.
	claims: func(f fields) bool {
		return f.has("hook_event_name") && f.has("timestamp") && !f.has("transcript_path")
	},
	parse: func(f fields) (Input, error) {
		in, err := parseClaudeShape(f, AgentCopilot)
		if err != nil {
			return in, err
		}
		if server, _, ok := cutMCPClaudeName(in.ToolName); ok {
			in.MCPTool, in.MCPServer = true, server
		} else if i := strings.LastIndex(in.ToolName, "-"); i > 0 && i < len(in.ToolName)-1 {
			// Copilot's own tools have no "-" in their names.
			in.setMCP(in.ToolName[:i], in.ToolName[i+1:])
		}
		if len(in.ToolResponse) == 0 {
			if tr, ok := f["tool_result"]; ok {
				in.ToolResponse = tr
			}
		}
		return in, nil
	},
	allow:   silentAllow,
	refuse:  denyDecision,
	mcpName: func(server, tool string) string { return server + "-" + tool },
}
