package barrier

import "encoding/json"

// Windsurf's Cascade hooks (.windsurf/hooks.json) send {"agent_action_name", "trajectory_id",
// "execution_id", "timestamp", "tool_info"}. pre_run_command's tool_info is {"command_line",
// "cwd"}; pre_mcp_tool_use's is {"mcp_server_name", "mcp_tool_name", "mcp_tool_arguments"}.
// Exit code 2 blocks a pre-hook, with stderr as the reason. The guard names the calls as the
// other agents do (run_command with {"command"}, mcp__<server>__<tool>) so that the same rules
// classify them. Nothing pairs a post-hook with its pre-hook for sure, so admissions are spent
// at once.

// The Windsurf events that report on a call (the guard has nothing to do for them).
const (
	EventPostRunCommand = "post_run_command"
	EventPostMCPToolUse = "post_mcp_tool_use"
)

// parseWindsurf reads a Windsurf hook input (agent_action_name is present).
func parseWindsurf(f fields) (Input, error) {
	event, _, err := f.str("agent_action_name")
	if err != nil {
		return Input{}, err
	}
	in := Input{Agent: AgentWindsurf, Event: event}
	if in.SessionID, _, err = f.str("trajectory_id"); err != nil {
		return Input{}, err
	}
	if in.ToolUseID, _, err = f.str("execution_id"); err != nil {
		return Input{}, err
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
			return Input{}, inputErr("Windsurf %s: \"tool_info\" is not the expected object: %v", event, err)
		}
	}
	in.Cwd = info.Cwd
	switch event {
	case EventPreRunCommand, EventPostRunCommand:
		if info.CommandLine == nil {
			return Input{}, inputErr("Windsurf %s hook input without \"tool_info.command_line\"", event)
		}
		in.ToolName = "run_command"
		in.ToolInput, _ = json.Marshal(map[string]string{"command": *info.CommandLine})
	case EventPreMCPToolUse, EventPostMCPToolUse:
		if info.Server == "" || info.Tool == "" {
			return Input{}, inputErr("Windsurf %s hook input without \"tool_info.mcp_server_name\" and \"tool_info.mcp_tool_name\"", event)
		}
		in.ToolName, in.MCPTool = "mcp__"+info.Server+"__"+info.Tool, true
		in.ToolInput = info.Arguments
		if len(in.ToolInput) == 0 || string(in.ToolInput) == "null" {
			in.ToolInput = json.RawMessage("{}")
		}
	}
	return in, nil
}
