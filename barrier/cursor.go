package barrier

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Cursor's hook events.
const (
	EventBeforeShellExecution = "beforeShellExecution" // decide, spent at once (no call id)
	EventBeforeMCPExecution   = "beforeMCPExecution"   // decide, spent at once (no call id)
	EventCursorPreToolUse     = "preToolUse"           // any tool: decide
	EventCursorPostToolUse    = "postToolUse"          // any tool: confirm
	EventCursorPostToolFail   = "postToolUseFailure"   // any tool: mark failed
)

var cursor = &Client{
	Agent:       AgentCursor,
	Name:        "Cursor",
	EventMember: "hook_event_name",
	Events: []Event{
		{EventCursorPreToolUse, RoleDecide}, {EventBeforeShellExecution, RoleDecide}, {EventBeforeMCPExecution, RoleDecide},
		{EventCursorPostToolUse, RoleConfirm}, {EventCursorPostToolFail, RoleFail},
	},
	ShellTools: []string{"Shell"},
	FileTools:  []string{"Write", "Edit", "Delete", "StrReplace", "EditNotebook"},
	MCPNames:   "MCP:<tool> or MCP:<server>:<tool> in preToolUse (read as <tool>); beforeMCPExecution names the bare tool",
	CallID:     "tool_use_id (preToolUse, postToolUse, postToolUseFailure; before*Execution send none)",
	HookEnv:    "not documented",
	MCPEnv:     "not documented; servers of ~/.cursor/mcp.json start in the home folder, ${workspaceFolder} is substituted",
	Answers: `JSON on stdout, exit 0: {"permission": "allow" | "deny", "user_message", "agent_message"}; a hook that prints nothing or fails lets the call run, ` +
		`unless it has "failClosed": true`,
	Checked: "Cursor's hooks documentation (cursor.com/docs/hooks, Cursor 2.x); not run",
	claims: func(f fields) bool {
		event, _, _ := f.str("hook_event_name")
		return f.has("conversation_id") || f.has("cursor_version") || startsLower(event)
	},
	parse: parseCursor,
	allow: func(_ Input, deciding bool) Answer {
		if deciding {
			return Answer{Stdout: `{"permission":"allow"}` + "\n"} // a silent hook counts as failed under failClosed
		}
		return Answer{Stdout: "{}\n"}
	},
	refuse: func(_ Input, user, reason string) Answer {
		out, _ := json.Marshal(struct {
			Permission   string `json:"permission"`
			UserMessage  string `json:"user_message"`
			AgentMessage string `json:"agent_message"`
		}{"deny", user, reason})
		return Answer{Stdout: string(out) + "\n"}
	},
	mcpName: func(_, tool string) string { return "MCP:" + tool },
}

// parseCursor reads a Cursor hook input: the common schema (conversation_id, generation_id,
// model, hook_event_name, cursor_version, workspace_roots) and the event's members.
func parseCursor(f fields) (Input, error) {
	in := Input{Agent: AgentCursor}
	var err error
	for _, s := range []struct {
		name string
		dst  *string
	}{
		{"hook_event_name", &in.Event},
		{"conversation_id", &in.SessionID}, {"generation_id", &in.GenerationID}, {"model", &in.Model},
		{"cwd", &in.Cwd}, {"tool_name", &in.ToolName}, {"tool_use_id", &in.ToolUseID},
		{"command", &in.Command}, {"url", &in.ServerURL},
	} {
		if *s.dst, _, err = f.str(s.name); err != nil {
			return Input{Agent: AgentCursor, Event: in.Event}, err
		}
	}
	if wr, ok := f["workspace_roots"]; ok {
		_ = json.Unmarshal(wr, &in.WorkspaceRoots) // advisory only
	}
	if ti, ok := f["tool_input"]; ok {
		// Cursor documents tool_input as a JSON string ("<json params>"); some versions send an
		// object. Either way Input.ToolInput holds the arguments as JSON.
		var s string
		if json.Unmarshal(ti, &s) == nil {
			if json.Valid([]byte(s)) && strings.TrimSpace(s) != "" {
				ti = json.RawMessage(s)
			}
		}
		in.ToolInput = append(json.RawMessage(nil), ti...)
	}
	// Cursor may name MCP tools "MCP:<tool>" (or "MCP:<server>:<tool>"), which no rule written
	// for the bare tool name would match: keep the tool's own name, and remember it is MCP's.
	if rest, ok := strings.CutPrefix(in.ToolName, "MCP:"); ok {
		if server, tool, found := strings.Cut(rest, ":"); found {
			in.MCPServer, rest = server, tool
		}
		in.ToolName, in.MCPTool = rest[strings.LastIndex(rest, ":")+1:], true
	}
	missing := func(what string) (Input, error) {
		return Input{Agent: AgentCursor, Event: in.Event}, inputErr("%s hook input without %q", in.Event, what)
	}
	switch in.Event {
	case EventCursorPreToolUse, EventCursorPostToolUse, EventCursorPostToolFail:
		if in.ToolName == "" {
			return missing("tool_name")
		}
		in.Error = f.text("error_message")
		if in.Error == "" {
			in.Error = f.text("error")
		}
	case EventBeforeShellExecution:
		if _, ok := f["command"]; !ok {
			return missing("command")
		}
		// The command line, read as the call of Cursor's shell tool.
		in.ToolName = "Shell"
		in.ToolInput, _ = json.Marshal(map[string]string{"command": in.Command})
	case EventBeforeMCPExecution:
		if in.ToolName == "" {
			return missing("tool_name")
		}
		in.MCPTool = true
	}
	return in, nil
}

func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}
