package barrier

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Agent names where a guard input came from, which decides how the guard answers.
type Agent string

// The agents whose hook input ParseHookInput understands; each is a Client (client.go), but for
// the explicit form.
const (
	AgentClaudeCode Agent = "claude-code" // Claude Code hooks
	AgentCodex      Agent = "codex"       // Codex CLI hooks (Claude Code's shape, plus turn_id)
	AgentCursor     Agent = "cursor"      // Cursor hooks (Cursor also runs .claude/settings.json hooks with this shape)
	AgentCline      Agent = "cline"       // Cline hooks: the CLI's tool_call/tool_result, the VS Code extension's PreToolUse/PostToolUse
	AgentWindsurf   Agent = "windsurf"    // Windsurf Cascade hooks: agent_action_name and tool_info
	AgentGemini     Agent = "gemini-cli"  // Gemini CLI hooks: Claude Code's shape with BeforeTool/AfterTool
	AgentVSCode     Agent = "vscode"      // VS Code's Local harness: Claude Code's tool fields, camelCase common fields
	AgentCopilot    Agent = "copilot"     // GitHub Copilot (its CLI, VS Code's Copilot harness): .github/hooks, PascalCase events
	AgentExplicit   Agent = "explicit"    // {"key", "payload", "description"}: a script or a person
)

// EventExplicit is the event of the explicit form: decided, spent at once.
const EventExplicit = "explicit"

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
	return "guard input: " + e.Msg + " (the guard reads one JSON object on stdin or as its argument: the hook input of " + KnownInputs() + ")"
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
	Event string `json:"event"` // the client's event name, or EventExplicit

	SessionID      string   `json:"session_id,omitempty"`      // the agent's session: session_id, Cursor's conversation_id, Cline's taskId, ...
	TranscriptPath string   `json:"transcript_path,omitempty"` // Claude Code, Codex, Gemini CLI
	Cwd            string   `json:"cwd,omitempty"`             // the agent's working directory
	PermissionMode string   `json:"permission_mode,omitempty"` // Claude Code, Codex
	Model          string   `json:"model,omitempty"`           // Codex, Cursor
	TurnID         string   `json:"turn_id,omitempty"`         // Codex
	GenerationID   string   `json:"generation_id,omitempty"`   // Cursor
	WorkspaceRoots []string `json:"workspace_roots,omitempty"` // Cursor workspace_roots, Cline workspaceRoots

	// ToolName is the tool as the rules see it: the client's own name, but an MCP tool of a
	// client that names MCP tools otherwise is mcp__<server>__<tool> (MCPServer names its server).
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"` // the tool's arguments as JSON (Cursor's JSON string is decoded)
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"` // PostToolUse
	Error        string          `json:"error,omitempty"`         // a report of a call that failed
	IsInterrupt  bool            `json:"is_interrupt,omitempty"`  // PostToolUseFailure
	Reason       string          `json:"reason,omitempty"`        // PermissionDenied

	MCPTool   bool   `json:"mcp_tool,omitempty"`   // the call is an MCP tool's, whatever its name looks like
	MCPServer string `json:"mcp_server,omitempty"` // the MCP server's name as the client spells it (Client.ServerName), when the input names it

	Command   string `json:"command,omitempty"`    // Cursor beforeShellExecution: the command line; beforeMCPExecution: the server's command
	ServerURL string `json:"server_url,omitempty"` // Cursor beforeMCPExecution: the server's URL

	Key         string          `json:"key,omitempty"`         // explicit form
	Payload     json.RawMessage `json:"payload,omitempty"`     // explicit form
	Description string          `json:"description,omitempty"` // explicit form
}

// ParseHookInput parses one guard input (see the package doc for the accepted shapes). It does
// no I/O. Input that is not one JSON object, or that is neither the explicit form nor a hook
// input, is an *InputError wrapping ErrUnknownInput; so is a client's input that lacks what the
// guard needs, and then the Input returned names the client and the event, so that the refusal
// can be said in the client's protocol.
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
	for _, c := range clients {
		if !c.claims(f) {
			continue
		}
		event, _, err := f.str(c.EventMember)
		if err != nil {
			return Input{}, err
		}
		if event == "" {
			return Input{}, inputErr("%q is empty", c.EventMember)
		}
		in, err := c.parse(f)
		if err != nil {
			return Input{Agent: c.Agent, Event: event}, err
		}
		return in, nil
	}
	if f.has("key") {
		return parseExplicit(f)
	}
	var members []string
	for _, c := range clients {
		if !slices.Contains(members, c.EventMember) {
			members = append(members, c.EventMember)
		}
	}
	return Input{}, inputErr("it has neither \"key\" (the explicit form) nor %s (an agent's hook input); its members are %s", quoteOr(members), memberList(m))
}

// EventOf returns the event a hook input names, even when the input does not parse as a whole,
// so that an unreadable input can still be answered as a decision or as a report. It returns ""
// when no event can be read.
func EventOf(data []byte) string {
	var m map[string]json.RawMessage
	if len(data) > MaxInputSize || json.Unmarshal(bytes.TrimSpace(data), &m) != nil {
		return ""
	}
	for _, c := range clients {
		var s string
		if json.Unmarshal(m[c.EventMember], &s) == nil && s != "" {
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

// Client returns the client the input came from, nil for the explicit form and for input that
// did not parse.
func (in Input) Client() *Client { return ClientOf(in.Agent) }

// Deciding reports whether the input asks whether a call may run (as opposed to reporting what
// happened to one).
func (in Input) Deciding() bool {
	if in.Agent == AgentExplicit {
		return true
	}
	c := in.Client()
	return c != nil && c.Role(in.Event) == RoleDecide
}

// MCPToolName returns an MCP call's tool as its server names it: ToolName without the
// mcp__<server>__ the guard gives it, or ToolName.
func (in Input) MCPToolName() string {
	if _, tool, ok := cutMCPClaudeName(in.ToolName); ok {
		return tool
	}
	return in.ToolName
}

// FromServer reports whether the input is a call of a tool of the MCP server configured under
// name in the client's MCP settings: the server its hook input names, as that client spells
// configured names (Codex writes agent-rewind as agent_rewind; a Claude Code plugin's servers
// are plugin_<plugin>_<server>, read as <server>).
func (in Input) FromServer(name string) bool {
	c := in.Client()
	return in.MCPTool && c != nil && in.MCPServer != "" && in.MCPServer == c.ServerName(name)
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

// quoteOr is "a", "b" or "c".
func quoteOr(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// ShellCommand returns the shell command line of a shell tool call: tool_input.command of a
// tool the client names in ShellTools (or tool_input.commands, several command lines, as Cline's
// CLI sends them). A command given as an argument vector (Codex's older shell tool) is returned
// as argv instead. ok is false when the input is not a shell call.
func (in Input) ShellCommand() (script string, argv []string, ok bool) {
	c := in.Client()
	if c == nil || !c.IsShellTool(in.ToolName) || in.MCPTool {
		return "", nil, false
	}
	script, argv = in.toolCommand()
	return script, argv, script != "" || argv != nil
}

// toolCommand reads tool_input.command as a command line or an argument vector, or
// tool_input.commands as command lines (joined a line each), whatever the tool.
func (in Input) toolCommand() (script string, argv []string) {
	if len(in.ToolInput) == 0 {
		return "", nil
	}
	var ti struct {
		Command  json.RawMessage `json:"command"`
		Commands json.RawMessage `json:"commands"`
	}
	if json.Unmarshal(in.ToolInput, &ti) != nil {
		return "", nil
	}
	if len(ti.Command) > 0 {
		if json.Unmarshal(ti.Command, &script) == nil {
			return script, nil
		}
		if json.Unmarshal(ti.Command, &argv) == nil && len(argv) > 0 {
			return "", argv
		}
		return "", nil
	}
	var lines []string
	if json.Unmarshal(ti.Commands, &lines) != nil {
		return "", nil
	}
	return strings.Join(lines, "\n"), nil
}

// ChangesFiles reports whether the call can change files: a shell command, an MCP tool, or one
// of the client's file-editing tools.
func (in Input) ChangesFiles() bool {
	if _, _, ok := in.ShellCommand(); ok || in.MCPTool {
		return true
	}
	c := in.Client()
	return c != nil && c.IsFileTool(in.ToolName)
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
