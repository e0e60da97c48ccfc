package barrier

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	AgentCursor     Agent = "cursor"      // Cursor hooks
	AgentExplicit   Agent = "explicit"    // {"key", "payload", "description"}: a script or a person
)

// Hook events the guard acts on. Any other event parses, and is answered as not handled.
const (
	EventPreToolUse           = "PreToolUse"           // Claude Code, Codex: decide
	EventPostToolUse          = "PostToolUse"          // Claude Code, Codex: confirm
	EventPostToolUseFailure   = "PostToolUseFailure"   // Claude Code: mark failed
	EventPermissionDenied     = "PermissionDenied"     // Claude Code (auto mode): release
	EventBeforeShellExecution = "beforeShellExecution" // Cursor: decide
	EventBeforeMCPExecution   = "beforeMCPExecution"   // Cursor: decide
	EventExplicit             = "explicit"             // the explicit form: decide, spent at once
)

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
	return "guard input: " + e.Msg + ` (the guard reads one JSON object: {"key": "...", "payload": {...}, "description": "..."}, or the hook input of Claude Code, Codex CLI or Cursor on stdin)`
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
	WorkspaceRoots []string `json:"workspace_roots,omitempty"` // Cursor

	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"` // the tool's arguments as JSON (Cursor's JSON string is decoded)
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"` // PostToolUse
	Error        string          `json:"error,omitempty"`         // PostToolUseFailure
	IsInterrupt  bool            `json:"is_interrupt,omitempty"`  // PostToolUseFailure
	Reason       string          `json:"reason,omitempty"`        // PermissionDenied

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
	event, hasEvent, err := f.str("hook_event_name")
	if err != nil {
		return Input{}, err
	}
	if !hasEvent {
		if _, hasKey := m["key"]; hasKey {
			return parseExplicit(f)
		}
		return Input{}, inputErr("it has neither \"key\" (the explicit form) nor \"hook_event_name\" (an agent's hook input); its members are %s", memberList(m))
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
	case f.has("turn_id"):
		in.Agent = AgentCodex
	default:
		in.Agent = AgentClaudeCode
	}
	return parseClaudeShape(f, in)
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
	case EventPreToolUse, EventPostToolUse, EventPostToolUseFailure, EventPermissionDenied:
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
	switch in.Event {
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
	if in.Agent == AgentCursor {
		if in.Event == EventBeforeShellExecution {
			return in.Command, nil, true
		}
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
// Bash and PowerShell, Codex's Bash (and the names of its older shell tools), Cursor's Shell.
var ShellTools = map[string]bool{
	"Bash": true, "PowerShell": true, "Shell": true, "shell": true,
	"local_shell": true, "exec_command": true, "container.exec": true, "unified_exec": true,
}
