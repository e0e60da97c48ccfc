package barrier

import (
	"encoding/json"
	"strings"
)

// Cline's hooks are executables named for their event (.clinerules/hooks/PreToolUse, ...). Their
// input is camelCase: the base fields (clineVersion, hookName, timestamp, taskId,
// workspaceRoots, userId) and one member named for the event, {"toolName", "parameters"}.
// Cline passes every tool's parameters as strings; use_mcp_tool's arguments are a JSON string.
// There is no tool call id, so an admitted effect is spent at once.

// parseCline reads a Cline hook input (hookName is present).
func parseCline(f fields) (Input, error) {
	event, _, err := f.str("hookName")
	if err != nil {
		return Input{}, err
	}
	in := Input{Agent: AgentCline, Event: event}
	if in.SessionID, _, err = f.str("taskId"); err != nil {
		return Input{}, err
	}
	if wr, ok := f["workspaceRoots"]; ok {
		_ = json.Unmarshal(wr, &in.WorkspaceRoots) // advisory: the folder to record in
	}
	var member string
	switch event {
	case EventPreToolUse:
		member = "preToolUse"
	case EventPostToolUse:
		member = "postToolUse"
	default:
		return in, nil // an event the guard does not act on
	}
	var call struct {
		ToolName   string          `json:"toolName"`
		Parameters json.RawMessage `json:"parameters"`
	}
	raw, ok := f[member]
	if !ok || json.Unmarshal(raw, &call) != nil || call.ToolName == "" {
		return Input{}, inputErr("Cline %s hook input without a %q object naming \"toolName\"", event, member)
	}
	in.ToolName, in.ToolInput = call.ToolName, call.Parameters
	if call.ToolName == "use_mcp_tool" {
		// Name the MCP call as Claude Code does (mcp__<server>__<tool>), with its own arguments,
		// so that the same rules classify it.
		var p struct {
			Server    string `json:"server_name"`
			Tool      string `json:"tool_name"`
			Arguments any    `json:"arguments"`
		}
		if json.Unmarshal(call.Parameters, &p) != nil || p.Server == "" || p.Tool == "" {
			return Input{}, inputErr("Cline use_mcp_tool parameters without \"server_name\" and \"tool_name\"")
		}
		in.ToolName, in.MCPTool = "mcp__"+p.Server+"__"+p.Tool, true
		in.ToolInput = json.RawMessage("{}")
		switch a := p.Arguments.(type) {
		case string:
			if strings.TrimSpace(a) != "" && json.Valid([]byte(a)) {
				in.ToolInput = json.RawMessage(a)
			}
		case map[string]any:
			if b, err := json.Marshal(a); err == nil {
				in.ToolInput = b
			}
		}
	}
	return in, nil
}
