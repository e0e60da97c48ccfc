package barrier

import "encoding/json"

// VS Code's Local harness (its legacy agent hooks) sends Claude Code's tool fields with
// camelCase common fields (hookEventName, sessionId). Sessions run by the Copilot harness send
// Copilot's input (copilot.go); both read the hook files of .github/hooks.
var vscode = &Client{
	Agent:       AgentVSCode,
	Name:        "VS Code",
	EventMember: "hookEventName",
	Events:      []Event{{EventPreToolUse, RoleDecide}, {EventPostToolUse, RoleConfirm}},
	ShellTools:  []string{"run_in_terminal"},
	FileTools: []string{"editFiles", "createFile", "create_file", "replace_string_in_file", "insert_edit_into_file",
		"multi_replace_string_in_file", "edit_notebook_file"},
	MCPNames: "not documented (read as mcp__<server>__<tool> when so named)",
	CallID:   "tool_use_id",
	HookEnv:  "not documented",
	MCPEnv:   "servers of .vscode/mcp.json (key servers), with ${workspaceFolder} substituted",
	Answers: `exit 0 with {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason"}} refuses and the reason reaches the model; ` +
		"exit 2 blocks too; no fail-closed setting is documented",
	SystemMessage: true,
	Checked:       "VS Code's hooks reference (microsoft/vscode-docs docs/agents/reference/hooks-reference.md, now the legacy Local harness); not run",
	claims:        func(f fields) bool { return f.has("hookEventName") && !f.has("hook_event_name") },
	parse: func(f fields) (Input, error) {
		in, err := parseClaudeShape(f, AgentVSCode)
		if err != nil {
			return in, err
		}
		in.SessionID = f.text("sessionId")
		if server, _, ok := cutMCPClaudeName(in.ToolName); ok {
			in.MCPTool, in.MCPServer = true, server
		}
		return in, nil
	},
	allow:   silentAllow,
	refuse:  denyDecision,
	mcpName: mcpClaudeName,
}

// denyDecision refuses with exit 0 and the JSON decision VS Code documents and Copilot reads:
// Copilot tells the model the reason only this way (on exit 2 the model reads "hook exited with
// code 2").
func denyDecision(in Input, _, reason string) Answer {
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	out, _ := json.Marshal(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{in.Event, "deny", reason}})
	return Answer{Stdout: string(out) + "\n"}
}
