package barrier

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
)

// Client is what agent-rewind knows of one coding agent's hooks: its events, its tool names, how
// it names MCP tools, where its call id is, what environment it gives hooks and MCP servers, and
// how it reads a hook's answer. Each client is one value in a file of its own (claudecode.go,
// codex.go, cursor.go, cline.go, windsurf.go, gemini.go, vscode.go, copilot.go), its table
// beside its parser and its answers, so that correcting a fact or adding a client is one edit in
// one file. The shipped integration files are checked against these facts
// (cli/cmd/agent-rewind/clientfacts_test.go), and so are the fixtures of testdata/hooks.
type Client struct {
	Agent Agent  // the name the guard records ("hook:<agent>")
	Name  string // as people call it
	// EventMember is the input member that names the hook event.
	EventMember string
	// Events are the hook events the guard acts on, and what each means. Any other event
	// parses and is answered as not handled.
	Events []Event
	// ShellTools are the tools whose input is a shell command line (tool_input.command, or
	// tool_input.commands, a list of command lines), as the hook input names them.
	ShellTools []string
	// FileTools are the tools, besides shell and MCP tools, whose calls change files: an
	// automatic checkpoint is taken before them where the client names its calls.
	FileTools []string
	// MCPNames is how the hook input names an MCP tool (<server> and <tool> as configured).
	MCPNames string
	// CallID says where the hook input carries the model's tool call id, "" when it carries
	// none: then an admission is spent at once, and an automatic checkpoint can be named only
	// by agent-rewind (NamesCalls).
	CallID string
	// NamesCalls: the hook input names no call, but each "before a call" input is exactly one
	// call, so agent-rewind names it itself (Client.NameCall) to take an automatic checkpoint
	// before it, grouped by prompt like the others. The name is not the model's: no report
	// after the call and no conversation rewind can match it.
	NamesCalls bool
	// HookEnv and MCPEnv say what environment the client gives its hooks and its MCP servers.
	HookEnv, MCPEnv string
	// MCPEnvOnly, when not nil, are the only variables of the client's environment its MCP
	// servers get (besides those a server's configuration names): a store chosen by any other
	// variable must be passed on explicitly.
	MCPEnvOnly []string
	// Answers says how the client reads a hook's answer: exit codes, output.
	Answers string
	// SystemMessage: the client shows the person a {"systemMessage"} the hook prints on an
	// answer that has no output of its own (the automatic checkpoint's notes use it).
	SystemMessage bool
	// Checked says what these facts come from: a real client's version, or documentation.
	Checked string

	claims func(f fields) bool           // whether an input is this client's
	parse  func(f fields) (Input, error) // reads a claimed input
	// allow answers an input that is not refused: a deciding event (deciding) or a report.
	allow func(in Input, deciding bool) Answer
	// refuse answers a refused call: user is the short line for the person, reason the
	// reason for the model.
	refuse func(in Input, user, reason string) Answer
	// spell is how the client spells a configured MCP server's name in Input.MCPServer (nil:
	// as configured).
	spell func(server string) string
	// mcpName is the name the hook input gives tool of server (MCPNames, for tests and matchers).
	mcpName func(server, tool string) string
}

// Role says what a hook event means to the guard.
type Role string

// The roles of hook events.
const (
	RoleDecide  Role = "decide"  // before a call: may it run?
	RoleConfirm Role = "confirm" // after a call ran: its key is spent (failed when the input carries an error)
	RoleFail    Role = "fail"    // after a call failed: its key is failed, refused until released
	RoleRelease Role = "release" // the call was denied and never ran: its key is released
	RoleReport  Role = "report"  // after a call, with nothing to do: the input names no call to pair
	// RolePrompt: a person's prompt, before the agent works on it; no call, nothing to decide.
	// The guard of the cli logs it (to group the calls that follow by prompt) and never blocks it.
	RolePrompt Role = "prompt"
)

// Event is one hook event of a client, and its role.
type Event struct {
	Name string
	Role Role
}

// clients are the clients ParseHookInput reads, in the order it asks them to claim an input.
// Cline, Windsurf and VS Code's Local harness name their event in a member of their own;
// Cursor, Gemini CLI, Codex and Copilot send Claude Code's hook_event_name with members (or
// events) only they send, so Claude Code, which claims any hook_event_name, comes last. (Set in
// init: the clients' parsers look clients up, which an initialiser here would make a cycle.)
var clients []*Client

func init() {
	clients = []*Client{cline, windsurf, vscode, cursor, gemini, codex, copilot, claudeCode}
}

// Clients returns the clients whose hook input the guard reads, in the order it tells them apart.
func Clients() []*Client { return slices.Clone(clients) }

// ClientOf returns the client named a, or nil (AgentExplicit and unknown names).
func ClientOf(a Agent) *Client {
	for _, c := range clients {
		if c.Agent == a {
			return c
		}
	}
	return nil
}

// Role returns what event means to the client, "" for an event the guard does not act on.
func (c *Client) Role(event string) Role {
	for _, e := range c.Events {
		if e.Name == event {
			return e.Role
		}
	}
	return ""
}

// EventsOf returns the client's events with role r, in its order.
func (c *Client) EventsOf(r Role) []string {
	var out []string
	for _, e := range c.Events {
		if e.Role == r {
			out = append(out, e.Name)
		}
	}
	return out
}

// IsShellTool reports whether the client's tool name runs a shell command line.
func (c *Client) IsShellTool(name string) bool { return slices.Contains(c.ShellTools, name) }

// IsFileTool reports whether the client's tool name edits files (ShellTools and MCP tools aside).
func (c *Client) IsFileTool(name string) bool { return slices.Contains(c.FileTools, name) }

// MCPToolName is the name the client's hook input gives tool of the MCP server configured as
// server (MCPNames).
func (c *Client) MCPToolName(server, tool string) string { return c.mcpName(server, tool) }

// ServerName is how the client spells, in Input.MCPServer, the MCP server configured as name.
func (c *Client) ServerName(name string) string {
	if c.spell == nil {
		return name
	}
	return c.spell(name)
}

// Checkpoints reports whether the guard can take automatic checkpoints before the client's
// calls: the client names them (CallID), or agent-rewind does (NamesCalls).
func (c *Client) Checkpoints() bool { return c.CallID != "" || c.NamesCalls }

// NameCall is the name agent-rewind gives a call of a client that names none (NamesCalls):
// the agent, "_" and 16 random hex digits ("gemini-cli_3f2a9c01b2de4f11"), an id rewind takes.
func (c *Client) NameCall() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return string(c.Agent) + "_" + hex.EncodeToString(b[:])
}

// confirms reports whether the client reports after a call by its id, so that an admission can
// stay pending until then.
func (c *Client) confirms() bool {
	return c.CallID != "" && len(c.EventsOf(RoleConfirm)) > 0
}

// IsDecidingEvent reports whether an event asks whether a call may run, for any client. An
// event name nobody sent (an input too broken to name one) counts as deciding: the guard then
// refuses rather than let a call it could not read run unrecorded.
func IsDecidingEvent(event string) bool {
	if event == "" || event == EventExplicit {
		return true
	}
	for _, c := range clients {
		if c.Role(event) == RoleDecide {
			return true
		}
	}
	return false
}

// KnownInputs names, for error messages, every client and event the guard reads.
func KnownInputs() string {
	var b strings.Builder
	for _, c := range clients {
		var names []string
		for _, e := range c.Events {
			names = append(names, e.Name)
		}
		b.WriteString(c.Name + " (" + strings.Join(names, ", ") + "), ")
	}
	return b.String() + `and the explicit form {"key", "payload", "description"}`
}

// mcpClaudeName is mcp__<server>__<tool>, the MCP tool name of Claude Code, which the guard
// gives every client's MCP calls when the client names them otherwise, so that one effect has
// one key and the rules' "tool" patterns (RULES.md) match whichever client asks.
func mcpClaudeName(server, tool string) string { return "mcp__" + server + "__" + tool }

// cutMCPClaudeName parses mcp__<server>__<tool>.
func cutMCPClaudeName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok && server != "" && tool != ""
}

// setMCP marks in as a call of tool on server, named as the guard names MCP calls.
func (in *Input) setMCP(server, tool string) {
	in.MCPTool, in.MCPServer = true, server
	in.ToolName = mcpClaudeName(server, tool)
}
