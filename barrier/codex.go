package barrier

import "strings"

var codex = &Client{
	Agent:       AgentCodex,
	Name:        "Codex CLI",
	EventMember: "hook_event_name",
	Events:      []Event{{EventPreToolUse, RoleDecide}, {EventPostToolUse, RoleConfirm}, {EventUserPromptSubmit, RolePrompt}},
	ShellTools:  []string{"Bash"}, // what the hooks call the shell tool the model calls exec_command
	FileTools:   []string{"apply_patch"},
	MCPNames:    "mcp__<server, - written _>__<tool> (agent-rewind's tools are mcp__agent_rewind__<tool>)",
	CallID:      "tool_use_id (the model's call id)",
	HookEnv:     "its own environment (REWIND_STATE_DIR and XDG_STATE_HOME reach the hooks)",
	MCPEnv: "a short list only (MCPEnvOnly, and certificate variables such as SSL_CERT_FILE), plus the server's env table and the variables its env_vars list names; " +
		"servers start in Codex's working directory",
	MCPEnvOnly: []string{"HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"},
	Answers: "exit 2 blocks the call and its stderr is the reason; exit 0 with no output lets it run; a hook that fails or times out lets the call run (Codex issue 41979); " +
		"a hook runs only once trusted (/hooks, --dangerously-bypass-hook-trust, or [hooks.state] trusted_hash); an untrusted hook is skipped silently",
	Checked: "Codex CLI 0.169.0 run against a mock model (payloads captured 2026-12-02); developers.openai.com/codex/hooks",
	claims:  func(f fields) bool { return f.has("hook_event_name") && f.has("turn_id") },
	parse: func(f fields) (Input, error) {
		in, err := parseClaudeShape(f, AgentCodex)
		if err != nil {
			return in, err
		}
		if server, _, ok := cutMCPClaudeName(in.ToolName); ok {
			in.MCPTool, in.MCPServer = true, server
		}
		return in, nil
	},
	allow:   silentAllow,
	refuse:  exitTwo,
	spell:   func(server string) string { return strings.ReplaceAll(server, "-", "_") },
	mcpName: func(server, tool string) string { return mcpClaudeName(strings.ReplaceAll(server, "-", "_"), tool) },
}
