package barrier

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Agent names where a guard input came from, which decides how the guard answers.
type Agent string

// The agents whose hook input ParseHookInput understands.
const (
	AgentClaudeCode Agent = "claude-code" // Claude Code hooks
	AgentCodex      Agent = "codex"       // Codex CLI hooks (Claude Code's shape, plus turn_id)
	AgentCursor     Agent = "cursor"      // Cursor hooks (Cursor also runs .claude/settings.json hooks with this shape)
	AgentCline      Agent = "cline"       // Cline hooks: executables named for the event, camelCase input
	AgentWindsurf   Agent = "windsurf"    // Windsurf Cascade hooks: agent_action_name and tool_info
	AgentGemini     Agent = "gemini-cli"  // Gemini CLI hooks: Claude Code's shape with BeforeTool/AfterTool
	AgentVSCode     Agent = "vscode"      // VS Code agent hooks: Claude Code's tool fields, camelCase common fields
	AgentExplicit   Agent = "explicit"    // {"key", "payload", "description"}: a script or a person
)

// KnownInputs names, for error messages, every client and event the guard reads.
const KnownInputs = `Claude Code and VS Code (PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied), ` +
	`Codex CLI (PreToolUse, PostToolUse), Cursor (beforeShellExecution, beforeMCPExecution, preToolUse, postToolUse, postToolUseFailure), ` +
	`Cline (PreToolUse, PostToolUse), Windsurf (pre_run_command, pre_mcp_tool_use, post_run_command, post_mcp_tool_use), ` +
	`Gemini CLI (BeforeTool, AfterTool), and the explicit form {"key", "payload", "description"}`

// Hook events the guard acts on. Any other event parses, and is answered as not handled.
const (
	EventPreToolUse           = "PreToolUse"           // Claude Code, Codex: decide
	EventPostToolUse          = "PostToolUse"          // Claude Code, Codex: confirm
	EventPostToolUseFailure   = "PostToolUseFailure"   // Claude Code: mark failed
	EventPermissionDenied     = "PermissionDenied"     // Claude Code (auto mode): release
	EventBeforeShellExecution = "beforeShellExecution" // Cursor: decide
	EventBeforeMCPExecution   = "beforeMCPExecution"   // Cursor: decide
	EventCursorPreToolUse     = "preToolUse"           // Cursor (any tool): decide
	EventCursorPostToolUse    = "postToolUse"          // Cursor (any tool): confirm
	EventCursorPostToolFail   = "postToolUseFailure"   // Cursor (any tool): mark failed
	EventBeforeTool           = "BeforeTool"           // Gemini CLI: decide
	EventAfterTool            = "AfterTool"            // Gemini CLI: report
	EventPreRunCommand        = "pre_run_command"      // Windsurf: decide
	EventPreMCPToolUse        = "pre_mcp_tool_use"     // Windsurf: decide
	EventExplicit             = "explicit"             // the explicit form: decide, spent at once
)

// IsDecidingEvent reports whether an event asks whether a call may run, for any client. An
// event name nobody sent (an input too broken to name one) counts as deciding: the guard then
// refuses rather than let a call it could not read run unrecorded.
func IsDecidingEvent(event string) bool {
	switch event {
	case EventPreToolUse, EventBeforeShellExecution, EventBeforeMCPExecution, EventCursorPreToolUse,
		EventBeforeTool, EventPreRunCommand, EventPreMCPToolUse, EventExplicit, "":
		return true
	}
	return false
}

// MaxInputSize is the largest guard input ParseHookInput accepts. PostToolUse carries the tool's
// whole output, so this is generous; the CLI should read at most MaxInputSize+1 bytes.
const MaxInputSize = 64 << 20

// ErrUnknownInput reports guard input that is none of the accepted shapes. The error returned is
// an *InputError wrapping it.
var ErrUnknownInput = errors.New("unrecognised guard input")

// InputError describes guard input that could not be parsed: what was wrong, and what the guard
// accepts. It wraps ErrUnknownInput.
type InputError struct {
	Msg string
}

// Error says what was wrong and which inputs the guard accepts.
func (e *InputError) Error() string {
	return "guard input: " + e.Msg + " (the guard reads one JSON object on stdin or as its argument: the hook input of " + KnownInputs + ")"
}

// Unwrap returns ErrUnknownInput.
func (e *InputError) Unwrap() error { return ErrUnknownInput }

func inputErr(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Input is one parsed guard input: an explicit effect, or an agent's hook event. Fields an
// agent does not send are empty.
type Input struct {
	Agent Agent  `json:"agent"`
	Event string `json:"event"` // hook_event_name, or EventExplicit

	SessionID      string   `json:"session_id,omitempty"`      // Claude Code, Codex: session_id; Cursor: conversation_id
	TranscriptPath string   `json:"transcript_path,omitempty"` // Claude Code, Codex
	Cwd            string   `json:"cwd,omitempty"`             // the agent's working directory
	PermissionMode string   `json:"permission_mode,omitempty"` // Claude Code, Codex
	Model          string   `json:"model,omitempty"`           // Codex, Cursor
	TurnID         string   `json:"turn_id,omitempty"`         // Codex
	GenerationID   string   `json:"generation_id,omitempty"`   // Cursor
	WorkspaceRoots []string `json:"workspace_roots,omitempty"` // Cursor workspace_roots, Cline workspaceRoots

	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"` // the tool's arguments as JSON (Cursor's JSON string is decoded)
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"` // PostToolUse
	Error        string          `json:"error,omitempty"`         // PostToolUseFailure
	IsInterrupt  bool            `json:"is_interrupt,omitempty"`  // PostToolUseFailure
	Reason       string          `json:"reason,omitempty"`        // PermissionDenied

	MCPTool bool `json:"mcp_tool,omitempty"` // the call is an MCP tool's, whatever its name looks like

	Command   string `json:"command,omitempty"`    // Cursor beforeShellExecution: the command line; beforeMCPExecution: the server's command
	ServerURL string `json:"server_url,omitempty"` // Cursor beforeMCPExecution: the server's URL

	Key         string          `json:"key,omitempty"`         // explicit form
	Payload     json.RawMessage `json:"payload,omitempty"`     // explicit form
	Description string          `json:"description,omitempty"` // explicit form
}

// ParseHookInput parses one guard input (see the package doc for the accepted shapes). It does
// no I/O. Input that is not one JSON object, or that is neither the explicit form nor a hook
// input, is an *InputError wrapping ErrUnknownInput.
func ParseHookInput(data []byte) (Input, error) {
	if len(data) > MaxInputSize {
		return Input{}, inputErr("%d bytes, more than the %d accepted", len(data), MaxInputSize)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return Input{}, inputErr("it is empty (pass the JSON as the argument, or on stdin)")
	}
	if trimmed[0] != '{' {
		return Input{}, inputErr("it does not start with '{' but with %q", shorten(string(trimmed[:min(len(trimmed), 20)]), 20))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return Input{}, inputErr("not valid JSON: %v", err)
	}
	f := fields(m)
	switch {
	case f.has("hookName"):
		return parseCline(f)
	case f.has("agent_action_name"):
		return parseWindsurf(f)
	case f.has("hookEventName") && !f.has("hook_event_name"):
		event, _, err := f.str("hookEventName")
		if err != nil {
			return Input{}, err
		}
		in, err := parseClaudeShape(f, Input{Agent: AgentVSCode, Event: event})
		if err == nil {
			in.SessionID = f.text("sessionId")
		}
		return in, err
	}
	event, hasEvent, err := f.str("hook_event_name")
	if err != nil {
		return Input{}, err
	}
	if !hasEvent {
		if _, hasKey := m["key"]; hasKey {
			return parseExplicit(f)
		}
		return Input{}, inputErr("it has neither \"key\" (the explicit form) nor \"hook_event_name\", \"hookName\" or \"agent_action_name\" (an agent's hook input); its members are %s", memberList(m))
	}
	if event == "" {
		return Input{}, inputErr("\"hook_event_name\" is empty")
	}
	in := Input{Event: event}
	_, isCursor := m["conversation_id"]
	_, hasCursorVersion := m["cursor_version"]
	switch {
	case isCursor || hasCursorVersion || startsLower(event):
		in.Agent = AgentCursor
		return parseCursor(f, in)
	case event == EventBeforeTool || event == EventAfterTool:
		in.Agent = AgentGemini
	case f.has("turn_id"):
		in.Agent = AgentCodex
	default:
		in.Agent = AgentClaudeCode
	}
	return parseClaudeShape(f, in)
}

// EventOf returns the event a hook input names, even when the input does not parse as a whole,
// so that an unreadable input can still be answered as a decision or as a report. It returns ""
// when no event can be read.
func EventOf(data []byte) string {
	var m map[string]json.RawMessage
	if len(data) > MaxInputSize || json.Unmarshal(bytes.TrimSpace(data), &m) != nil {
		return ""
	}
	for _, name := range []string{"hook_event_name", "hookName", "agent_action_name", "hookEventName"} {
		var s string
		if json.Unmarshal(m[name], &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func parseExplicit(f fields) (Input, error) {
	for name := range f {
		switch name {
		case "key", "payload", "description":
		default:
			return Input{}, inputErr("the explicit form has an unknown member %q (it takes only \"key\", \"payload\" and \"description\")", name)
		}
	}
	key, _, err := f.str("key")
	if err != nil {
		return Input{}, err
	}
	if err := validateKey(key); err != nil {
		return Input{}, err
	}
	desc, _, err := f.str("description")
	if err != nil {
		return Input{}, err
	}
	in := Input{Agent: AgentExplicit, Event: EventExplicit, Key: key, Description: desc}
	if p, ok := f["payload"]; ok {
		in.Payload = append(json.RawMessage(nil), p...)
	}
	return in, nil
}

func parseClaudeShape(f fields, in Input) (Input, error) {
	var err error
	for _, s := range []struct {
		name string
		dst  *string
	}{
		{"session_id", &in.SessionID}, {"transcript_path", &in.TranscriptPath}, {"cwd", &in.Cwd},
		{"permission_mode", &in.PermissionMode}, {"model", &in.Model}, {"turn_id", &in.TurnID},
		{"tool_name", &in.ToolName}, {"tool_use_id", &in.ToolUseID}, {"reason", &in.Reason},
	} {
		if *s.dst, _, err = f.str(s.name); err != nil {
			return Input{}, err
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
	switch in.Event {
	case EventPreToolUse, EventPostToolUse, EventPostToolUseFailure, EventPermissionDenied, EventBeforeTool, EventAfterTool:
		if in.ToolName == "" {
			return Input{}, inputErr("%s hook input without \"tool_name\"", in.Event)
		}
	}
	return in, nil
}

func parseCursor(f fields, in Input) (Input, error) {
	var err error
	for _, s := range []struct {
		name string
		dst  *string
	}{
		{"conversation_id", &in.SessionID}, {"generation_id", &in.GenerationID}, {"model", &in.Model},
		{"cwd", &in.Cwd}, {"tool_name", &in.ToolName}, {"tool_use_id", &in.ToolUseID},
		{"command", &in.Command}, {"url", &in.ServerURL},
	} {
		if *s.dst, _, err = f.str(s.name); err != nil {
			return Input{}, err
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
		in.ToolName = rest[strings.LastIndex(rest, ":")+1:]
		in.MCPTool = true
	}
	if in.Event == EventBeforeMCPExecution {
		in.MCPTool = true
	}
	switch in.Event {
	case EventCursorPreToolUse, EventCursorPostToolUse, EventCursorPostToolFail:
		if in.ToolName == "" {
			return Input{}, inputErr("%s hook input without \"tool_name\"", in.Event)
		}
		in.Error = f.text("error_message")
		if in.Error == "" {
			in.Error = f.text("error")
		}
	case EventBeforeShellExecution:
		if _, ok := f["command"]; !ok {
			return Input{}, inputErr("beforeShellExecution hook input without \"command\"")
		}
	case EventBeforeMCPExecution:
		if in.ToolName == "" {
			return Input{}, inputErr("beforeMCPExecution hook input without \"tool_name\"")
		}
	}
	return in, nil
}

// fields is a decoded JSON object whose members are read leniently: only the members the guard
// relies on must have the right type.
type fields map[string]json.RawMessage

func (f fields) has(name string) bool {
	v, ok := f[name]
	return ok && string(v) != "null"
}

// str reads a string member; null or absent reads as "", other types are an error.
func (f fields) str(name string) (string, bool, error) {
	v, ok := f[name]
	if !ok || string(v) == "null" {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", true, inputErr("member %q must be a string, not %s", name, shorten(string(v), 40))
	}
	return s, true, nil
}

// text reads a member as text: a string as itself, anything else as its JSON.
func (f fields) text(name string) string {
	v, ok := f[name]
	if !ok || string(v) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

func memberList(m map[string]json.RawMessage) string {
	if len(m) == 0 {
		return "none"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, fmt.Sprintf("%q", shorten(k, 40)))
	}
	slices.Sort(names) // map order is random; sort for a stable message
	if len(names) > 10 {
		names = append(names[:10], "...")
	}
	return strings.Join(names, ", ")
}

func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

// ShellCommand returns the shell command line of a shell tool call: Cursor's
// beforeShellExecution command, or tool_input.command of a Claude Code / Codex shell tool
// (ShellTools). A command given as an argument vector (Codex's older shell tool) is returned as
// argv instead. ok is false when the input is not a shell call.
func (in Input) ShellCommand() (script string, argv []string, ok bool) {
	if in.Agent == AgentCursor && in.Event == EventBeforeShellExecution {
		return in.Command, nil, true
	}
	if in.Agent == AgentCursor && in.Event == EventBeforeMCPExecution {
		return "", nil, false
	}
	if !ShellTools[in.ToolName] {
		return "", nil, false
	}
	script, argv = in.toolCommand()
	return script, argv, script != "" || argv != nil
}

// toolCommand reads tool_input.command as a command line or an argument vector, whatever the
// tool.
func (in Input) toolCommand() (script string, argv []string) {
	if len(in.ToolInput) == 0 {
		return "", nil
	}
	var ti struct {
		Command json.RawMessage `json:"command"`
	}
	if json.Unmarshal(in.ToolInput, &ti) != nil || len(ti.Command) == 0 {
		return "", nil
	}
	if json.Unmarshal(ti.Command, &script) == nil {
		return script, nil
	}
	if json.Unmarshal(ti.Command, &argv) == nil && len(argv) > 0 {
		return "", argv
	}
	return "", nil
}

// ShellTools are the tool names whose tool_input.command is a shell command line: Claude Code's
// Bash and PowerShell, Codex's Bash (and the names of its older shell tools), Cursor's Shell,
// Gemini CLI's run_shell_command, Cline's execute_command, VS Code's run_in_terminal, and
// run_command, the name the guard gives Windsurf's pre_run_command.
var ShellTools = map[string]bool{
	"Bash": true, "PowerShell": true, "Shell": true, "shell": true,
	"local_shell": true, "exec_command": true, "container.exec": true, "unified_exec": true,
	"run_shell_command": true, "execute_command": true, "run_in_terminal": true, "run_command": true,
}

// Folder returns the folder the input names as the agent's project, "" when it names none:
// the workspace root that holds the working directory (Cursor's workspace_roots, Cline's
// workspaceRoots; the first root when none holds it), else the working directory (cwd of Claude
// Code, Codex, Gemini CLI and Cursor; Windsurf's tool_info.cwd).
func (in Input) Folder() string {
	for _, r := range in.WorkspaceRoots {
		if in.Cwd != "" && within(in.Cwd, r) {
			return r
		}
	}
	if len(in.WorkspaceRoots) > 0 && in.WorkspaceRoots[0] != "" {
		return in.WorkspaceRoots[0]
	}
	return in.Cwd
}

// within reports whether path p is dir or lies under it (lexically).
func within(p, dir string) bool {
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	if p == dir {
		return true
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
