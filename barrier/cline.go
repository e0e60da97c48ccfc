package barrier

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Cline's hooks are executables named for their event (.clinerules/hooks/PreToolUse, ...), read
// by its CLI and its VS Code extension, which send two forms. The CLI (npm cline, 3.x) sends
// {"hookName": "tool_call", "tool_call": {"id", "name", "input"}, ...} to PreToolUse and
// {"hookName": "tool_result", "tool_result": {"id", "name", "input", "output", "error"}, ...}
// to PostToolUse: the id is the model's call id, so an admission stays pending until the
// result. The extension sends {"hookName": "PreToolUse", "preToolUse": {"toolName",
// "parameters"}} (parameters as strings; use_mcp_tool's arguments a JSON string) and no call
// id, so an admission is spent at once. Both send taskId and workspaceRoots.

// Cline's hook events.
const (
	EventClineToolCall   = "tool_call"   // CLI, PreToolUse file: decide
	EventClineToolResult = "tool_result" // CLI, PostToolUse file: confirm
)

var cline = &Client{
	Agent:       AgentCline,
	Name:        "Cline",
	EventMember: "hookName",
	Events: []Event{
		{EventClineToolCall, RoleDecide}, {EventClineToolResult, RoleConfirm},
		{EventPreToolUse, RoleDecide}, {EventPostToolUse, RoleReport},
	},
	ShellTools: []string{"run_commands", "execute_command"},
	FileTools:  []string{"editor", "apply_patch", "write_to_file", "replace_in_file"},
	MCPNames:   "CLI: <server>__<tool> (characters outside [A-Za-z0-9_-] written _); extension: use_mcp_tool {server_name, tool_name, arguments}",
	CallID:     "tool_call.id and tool_result.id (the CLI); the extension sends none",
	HookEnv: "the CLI's hooks run in its hub daemon, which keeps the environment of the session that started it: " +
		"later sessions' hooks and commands get that first environment until `cline hub stop`",
	MCPEnv: "the CLI starts servers from ~/.cline/data/settings/cline_mcp_settings.json in its hub daemon; the extension in the extension host's folder; only ${env:VAR} is substituted",
	Answers: `JSON on stdout {"cancel", "errorMessage", "contextModification"}, and for the CLI "overrideInput"; the CLI: cancel: true aborts the whole run (its reason only in Cline's log), ` +
		`overrideInput replaces the call's input, and a hook that exits non-zero, prints nothing or prints bad JSON lets the call run; the extension: cancel blocks the action`,
	Checked: "Cline CLI 3.0.65 (npm cline) run against a mock model (payloads captured 2026-12-02); the extension's hook reference (cline/cline docs/features/hooks/hook-reference.mdx)",
	claims:  func(f fields) bool { return f.has("hookName") },
	parse:   parseCline,
	allow:   func(Input, bool) Answer { return Answer{Stdout: `{"cancel":false}` + "\n"} },
	refuse:  clineRefuse,
	spell:   func(server string) string { return clineUnsafe.ReplaceAllString(server, "_") },
	mcpName: func(server, tool string) string { return clineUnsafe.ReplaceAllString(server+"__"+tool, "_") },
}

// clineUnsafe is what Cline's CLI replaces by "_" in an MCP tool's name.
var clineUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// parseCline reads a Cline hook input (hookName is present).
func parseCline(f fields) (Input, error) {
	event, _, err := f.str("hookName")
	if err != nil {
		return Input{}, err
	}
	in := Input{Agent: AgentCline, Event: event}
	fail := func(err error) (Input, error) { return Input{Agent: AgentCline, Event: event}, err }
	if in.SessionID, _, err = f.str("taskId"); err != nil {
		return fail(err)
	}
	if wr, ok := f["workspaceRoots"]; ok {
		_ = json.Unmarshal(wr, &in.WorkspaceRoots) // advisory: the folder to record in
	}
	switch event {
	case EventClineToolCall, EventClineToolResult:
		var call struct {
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
			Error json.RawMessage `json:"error"`
		}
		raw, ok := f[event]
		if !ok || json.Unmarshal(raw, &call) != nil || call.Name == "" {
			return fail(inputErr("Cline %s hook input without a %q object naming \"name\"", event, event))
		}
		in.ToolName, in.ToolUseID, in.ToolInput = call.Name, call.ID, call.Input
		if len(in.ToolInput) == 0 || string(in.ToolInput) == "null" {
			in.ToolInput = json.RawMessage("{}")
		}
		in.Error = fields{"error": call.Error}.text("error")
		// The CLI's own tools have no "__" in their names; an MCP tool is <server>__<tool>.
		if server, tool, ok := strings.Cut(call.Name, "__"); ok && server != "" && tool != "" {
			in.setMCP(server, tool)
		}
		return in, nil
	case EventPreToolUse, EventPostToolUse:
	default:
		return in, nil // an event the guard does not act on
	}
	member := "preToolUse"
	if event == EventPostToolUse {
		member = "postToolUse"
	}
	var call struct {
		ToolName   string          `json:"toolName"`
		Parameters json.RawMessage `json:"parameters"`
	}
	raw, ok := f[member]
	if !ok || json.Unmarshal(raw, &call) != nil || call.ToolName == "" {
		return fail(inputErr("Cline %s hook input without a %q object naming \"toolName\"", event, member))
	}
	in.ToolName, in.ToolInput = call.ToolName, call.Parameters
	if call.ToolName == "use_mcp_tool" {
		// Named as Claude Code names MCP calls, with the call's own arguments, so that the same
		// rules classify it.
		var p struct {
			Server    string `json:"server_name"`
			Tool      string `json:"tool_name"`
			Arguments any    `json:"arguments"`
		}
		if json.Unmarshal(call.Parameters, &p) != nil || p.Server == "" || p.Tool == "" {
			return fail(inputErr("Cline use_mcp_tool parameters without \"server_name\" and \"tool_name\""))
		}
		in.setMCP(p.Server, p.Tool)
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

// clineRefuse refuses a call. cancel: true stops the CLI's whole run with the reason only in
// its log, so a shell call of the CLI is refused by replacing its commands with one that
// prints the reason and fails: the call does not run, the model reads why in its result, and
// the run goes on. Other calls (MCP tools, the extension's) are cancelled.
func clineRefuse(in Input, user, reason string) Answer {
	if in.Event == EventClineToolCall && in.Client().IsShellTool(in.ToolName) && !in.MCPTool {
		script := "printf '%s\\n' " + shellQuote(reason) + " >&2; exit 2"
		out, _ := json.Marshal(map[string]any{"cancel": false, "overrideInput": map[string][]string{"commands": {script}}})
		return Answer{Stdout: string(out) + "\n"}
	}
	out, _ := json.Marshal(struct {
		Cancel       bool   `json:"cancel"`
		ErrorMessage string `json:"errorMessage"`
	}{true, user + ": " + reason})
	return Answer{Stdout: string(out) + "\n"}
}

// shellQuote quotes s for a POSIX shell: in single quotes, each ' written '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
