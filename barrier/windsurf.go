package barrier

import "encoding/json"

// Windsurf's Cascade hooks (.windsurf/hooks.json) send {"agent_action_name", "trajectory_id",
// "execution_id", "timestamp", "tool_info"}. pre_run_command's tool_info is {"command_line",
// "cwd"}; pre_mcp_tool_use's is {"mcp_server_name", "mcp_tool_name", "mcp_tool_arguments"}.
// Exit code 2 blocks a pre-hook, with stderr as the reason. The guard names the calls as the
// other agents do (run_command with {"command"}, mcp__<server>__<tool>) so that the same rules
// classify them. Nothing pairs a post-hook with its pre-hook for sure, so admissions are spent
// at once.

// Windsurf's hook events.
const (
	EventPreRunCommand  = "pre_run_command"   // decide
	EventPreMCPToolUse  = "pre_mcp_tool_use"  // decide
	EventPostRunCommand = "post_run_command"  // report: nothing to do
	EventPostMCPToolUse = "post_mcp_tool_use" // report: nothing to do
)

var windsurf = &Client{
	Agent:       AgentWindsurf,
	Name:        "Windsurf",
	EventMember: "agent_action_name",
	Events: []Event{
		{EventPreRunCommand, RoleDecide}, {EventPreMCPToolUse, RoleDecide},
		{EventPostRunCommand, RoleReport}, {EventPostMCPToolUse, RoleReport},
	},
	ShellTools: []string{"run_command"}, // the name the guard gives pre_run_command's call
	MCPNames:   "tool_info {mcp_server_name, mcp_tool_name, mcp_tool_arguments}",
	CallID:     "", // execution_id pairs a pre- and a post-hook, but is no id the agent knows
	HookEnv:    "not documented",
	MCPEnv:     "not documented; its MCP configuration (~/.codeium/windsurf/mcp_config.json) is global",
	Answers:    "exit 2 blocks a pre-hook and its stderr is the reason (show_output shows it); other codes let the action run",
	Checked:    "Windsurf's Cascade hooks documentation (docs.windsurf.com/windsurf/cascade/hooks, beta); not run",
	claims:     func(f fields) bool { return f.has("agent_action_name") },
	parse:      parseWindsurf,
	allow:      silentAllow,
	refuse:     exitTwo,
	mcpName:    mcpClaudeName,
}

// parseWindsurf reads a Windsurf hook input (agent_action_name is present).
func parseWindsurf(f fields) (Input, error) {
	event, _, err := f.str("agent_action_name")
	if err != nil {
		return Input{}, err
	}
	in := Input{Agent: AgentWindsurf, Event: event}
	fail := func(err error) (Input, error) { return Input{Agent: AgentWindsurf, Event: event}, err }
	if in.SessionID, _, err = f.str("trajectory_id"); err != nil {
		return fail(err)
	}
	if in.ToolUseID, _, err = f.str("execution_id"); err != nil {
		return fail(err)
	}
	var info struct {
		CommandLine *string         `json:"command_line"`
		Cwd         string          `json:"cwd"`
		Server      string          `json:"mcp_server_name"`
		Tool        string          `json:"mcp_tool_name"`
		Arguments   json.RawMessage `json:"mcp_tool_arguments"`
	}
	if raw, ok := f["tool_info"]; ok {
		if err := json.Unmarshal(raw, &info); err != nil {
			return fail(inputErr("Windsurf %s: \"tool_info\" is not the expected object: %v", event, err))
		}
	}
	in.Cwd = info.Cwd
	switch event {
	case EventPreRunCommand, EventPostRunCommand:
		if info.CommandLine == nil {
			return fail(inputErr("Windsurf %s hook input without \"tool_info.command_line\"", event))
		}
		in.ToolName = "run_command"
		in.ToolInput, _ = json.Marshal(map[string]string{"command": *info.CommandLine})
	case EventPreMCPToolUse, EventPostMCPToolUse:
		if info.Server == "" || info.Tool == "" {
			return fail(inputErr("Windsurf %s hook input without \"tool_info.mcp_server_name\" and \"tool_info.mcp_tool_name\"", event))
		}
		in.setMCP(info.Server, info.Tool)
		in.ToolInput = info.Arguments
		if len(in.ToolInput) == 0 || string(in.ToolInput) == "null" {
			in.ToolInput = json.RawMessage("{}")
		}
	}
	return in, nil
}
