package agentconfig

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agent-rewind/rewind/barrier"
)

// Scope is where a configuration file is read from: the project's folder, or the user's (every
// project's sessions read it).
type Scope string

const (
	ScopeProject Scope = "project"
	ScopeUser    Scope = "user"
)

// format is how a part's file is written.
type format byte

const (
	formatJSON   format = iota // merged member by member (jsontree.go, merge.go)
	formatTOML                 // tables appended as text (toml.go, tomledit.go)
	formatScript               // a whole executable file (Cline's hooks)
)

// How an MCP server entry names the project (Part.Workspace).
const (
	asShipped = iota // the shipped arguments (the client substitutes a variable, or the server finds the project)
	nameRoot         // --workspace with the project's absolute path: the client starts servers elsewhere
	dropFlag         // no --workspace: a user-level entry serves every project (the server reads CLAUDE_PROJECT_DIR)
)

// Part is one configuration file of a client that carries agent-rewind's entries, in one scope.
type Part struct {
	What    string // "hooks", "MCP server", "hooks and MCP server"
	Scope   Scope
	path    func(l Locations) string
	Shipped string // the shipped file it is made from, under integrations/
	format  format
	// Hooks and Servers are the members (TOML: tables) holding hooks and MCP servers ("" for
	// none); Extra are other top-level members the shipped file carries (Cursor's version).
	Hooks, Servers string
	Extra          []string
	// Event is a script's hook event (Cline's PreToolUse, PostToolUse).
	Event     string
	Workspace int // how the MCP server names the project: asShipped, nameRoot or dropFlag
}

// Path is the part's file for these locations.
func (p Part) Path(l Locations) string { return p.path(l) }

// members are the shipped JSON file's top-level members the part merges, in the file's order
// of importance.
func (p Part) members() []string {
	var out []string
	for _, m := range append(append([]string(nil), p.Extra...), p.Hooks, p.Servers) {
		if m != "" {
			out = append(out, m)
		}
	}
	return out
}

// Locations are the folders a client's files are found from.
type Locations struct {
	Root   string              // the project (hook.Choose's workspace)
	Home   string              // the user's home folder
	Getenv func(string) string // CLAUDE_CONFIG_DIR, CODEX_HOME
}

func (l Locations) env(k string) string {
	if l.Getenv == nil {
		return ""
	}
	return l.Getenv(k)
}

// claudeDir is Claude Code's user folder: $CLAUDE_CONFIG_DIR, else ~/.claude.
func (l Locations) claudeDir() string {
	if d := l.env("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(l.Home, ".claude")
}

// claudeJSON is Claude Code's user-level MCP file (what claude mcp add --scope user writes).
func (l Locations) claudeJSON() string {
	if d := l.env("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	return filepath.Join(l.Home, ".claude.json")
}

// codexHome is Codex's user folder: $CODEX_HOME, else ~/.codex.
func (l Locations) codexHome() string {
	if d := l.env("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(l.Home, ".codex")
}

func inRoot(elem ...string) func(Locations) string {
	return func(l Locations) string { return filepath.Join(append([]string{l.Root}, elem...)...) }
}

func inHome(elem ...string) func(Locations) string {
	return func(l Locations) string { return filepath.Join(append([]string{l.Home}, elem...)...) }
}

// Client is one agent client setup writes the configuration of: its name on the command
// line, its facts (barrier), the files it reads, and what a person must know of them.
type Client struct {
	Name  string // as agent-rewind setup takes it: claude-code, codex, ...
	Facts *barrier.Client
	Parts []Part
	// notes say, per scope, what setup cannot do there and what to do instead (a part the
	// client reads only from the other scope, a folder it must trust); %[1]s is the project.
	notes map[Scope][]string
}

// Notes returns what a person must know after setup in scope, for the project root.
func (c *Client) Notes(scope Scope, l Locations) []string {
	var out []string
	for _, n := range c.notes[scope] {
		n = strings.ReplaceAll(n, "{root}", l.Root)
		n = strings.ReplaceAll(n, "{home}", l.Home)
		out = append(out, n)
	}
	return out
}

// PartsIn returns the client's parts of one scope.
func (c *Client) PartsIn(s Scope) []Part {
	var out []Part
	for _, p := range c.Parts {
		if p.Scope == s {
			out = append(out, p)
		}
	}
	return out
}

var clients = []*Client{
	{
		Name:  "claude-code",
		Facts: barrier.ClientOf(barrier.AgentClaudeCode),
		Parts: []Part{
			{What: "hooks", Scope: ScopeProject, path: inRoot(".claude", "settings.json"), Shipped: "claude-code/hooks/hooks.json", Hooks: "hooks"},
			{What: "MCP server", Scope: ScopeProject, path: inRoot(".mcp.json"), Shipped: "claude-code/.mcp.json", Servers: "mcpServers", Workspace: nameRoot},
			{What: "hooks", Scope: ScopeUser, path: func(l Locations) string { return filepath.Join(l.claudeDir(), "settings.json") }, Shipped: "claude-code/hooks/hooks.json", Hooks: "hooks"},
			{What: "MCP server", Scope: ScopeUser, path: Locations.claudeJSON, Shipped: "claude-code/.mcp.json", Servers: "mcpServers", Workspace: dropFlag},
		},
		notes: map[Scope][]string{
			ScopeProject: {
				"Claude Code started in a subfolder of {root} reads {root}/.mcp.json but not {root}/.claude/settings.json (its issues 36793, 76441, 86187): the hooks run only in sessions started in {root} itself. For sessions started anywhere, run agent-rewind setup claude-code --user (the hooks then run in every project's sessions), or use the plugin (integrations/claude-code).",
				"An interactive Claude Code session asks once to approve the project's MCP server (.mcp.json); claude -p uses it at once.",
				"The PreToolUse hook has \"onFailure\": \"block\": if agent-rewind-hook is removed, Claude Code blocks every call it matches; run agent-rewind setup claude-code --remove before uninstalling agent-rewind.",
			},
			ScopeUser: {
				"The hooks now run in the sessions of every project you open in Claude Code: each project gets a store of its own, outside it (agent-rewind store shows where).",
				"The PreToolUse hook has \"onFailure\": \"block\": if agent-rewind-hook is removed, Claude Code blocks every call it matches; run agent-rewind setup claude-code --user --remove before uninstalling agent-rewind.",
			},
		},
	},
	{
		Name:  "codex",
		Facts: barrier.ClientOf(barrier.AgentCodex),
		Parts: []Part{
			{What: "hooks", Scope: ScopeProject, path: inRoot(".codex", "hooks.json"), Shipped: "codex/.codex/hooks.json", Hooks: "hooks"},
			{What: "MCP server", Scope: ScopeProject, path: inRoot(".codex", "config.toml"), Shipped: "codex/.codex/config.toml", format: formatTOML, Servers: "mcp_servers"},
			{What: "hooks", Scope: ScopeUser, path: func(l Locations) string { return filepath.Join(l.codexHome(), "hooks.json") }, Shipped: "codex/.codex/hooks.json", Hooks: "hooks"},
			{What: "MCP server", Scope: ScopeUser, path: func(l Locations) string { return filepath.Join(l.codexHome(), "config.toml") }, Shipped: "codex/.codex/config.toml", format: formatTOML, Servers: "mcp_servers"},
		},
		notes: map[Scope][]string{
			ScopeProject: {
				"Codex reads {root}/.codex only once you trust the project (Codex asks when you start it there), and runs each hook only once it is trusted, skipping it silently until then: run agent-rewind setup codex --trust-hooks (it asks codex app-server for the hooks' hashes and trusts agent-rewind's), or trust them with /hooks in a Codex session.",
			},
			ScopeUser: {
				"Codex runs each hook only once it is trusted, skipping it silently until then: run agent-rewind setup codex --user --trust-hooks, or trust them with /hooks in a Codex session.",
			},
		},
	},
	{
		Name:  "cursor",
		Facts: barrier.ClientOf(barrier.AgentCursor),
		Parts: []Part{
			{What: "hooks", Scope: ScopeProject, path: inRoot(".cursor", "hooks.json"), Shipped: "cursor/.cursor/hooks.json", Hooks: "hooks", Extra: []string{"version"}},
			{What: "MCP server", Scope: ScopeProject, path: inRoot(".cursor", "mcp.json"), Shipped: "cursor/.cursor/mcp.json", Servers: "mcpServers"},
			{What: "hooks", Scope: ScopeUser, path: inHome(".cursor", "hooks.json"), Shipped: "cursor/.cursor/hooks.json", Hooks: "hooks", Extra: []string{"version"}},
			{What: "MCP server", Scope: ScopeUser, path: inHome(".cursor", "mcp.json"), Shipped: "cursor/.cursor/mcp.json", Servers: "mcpServers"},
		},
		notes: map[Scope][]string{
			ScopeProject: {"Cursor's preToolUse hook has \"failClosed\": true: if agent-rewind-hook is removed, every tool call is blocked until you run agent-rewind setup cursor --remove."},
			ScopeUser:    {"Cursor's preToolUse hook has \"failClosed\": true: if agent-rewind-hook is removed, every tool call is blocked until you run agent-rewind setup cursor --user --remove."},
		},
	},
	{
		Name:  "cline",
		Facts: barrier.ClientOf(barrier.AgentCline),
		Parts: []Part{
			{What: "hooks", Scope: ScopeProject, path: inRoot(".clinerules", "hooks", "PreToolUse"), Shipped: "cline/.clinerules/hooks/PreToolUse", format: formatScript, Event: "PreToolUse"},
			{What: "hooks", Scope: ScopeProject, path: inRoot(".clinerules", "hooks", "PostToolUse"), Shipped: "cline/.clinerules/hooks/PostToolUse", format: formatScript, Event: "PostToolUse"},
			{What: "MCP server", Scope: ScopeUser, path: inHome(".cline", "data", "settings", "cline_mcp_settings.json"), Shipped: "cline/cline_mcp_settings.json", Servers: "mcpServers", Workspace: nameRoot},
		},
		notes: map[Scope][]string{
			ScopeProject: {"Cline reads MCP servers only from {home}/.cline/data/settings/cline_mcp_settings.json, for every project: run agent-rewind setup cline --user to add agent-rewind's server there, naming {root}."},
			ScopeUser: {
				"Cline's MCP settings are global and its hub daemon starts every session's servers in the first session's folder, so the entry names {root}: one project at a time (agent-rewind setup cline --user in another project moves it there).",
				"Cline reads hooks only from the project: run agent-rewind setup cline in {root} for them. After changing REWIND_STATE_DIR or XDG_STATE_HOME, run cline hub stop: the hub keeps the first session's environment.",
			},
		},
	},
	{
		Name:  "windsurf",
		Facts: barrier.ClientOf(barrier.AgentWindsurf),
		Parts: []Part{
			{What: "hooks", Scope: ScopeProject, path: inRoot(".windsurf", "hooks.json"), Shipped: "windsurf/.windsurf/hooks.json", Hooks: "hooks"},
			{What: "hooks", Scope: ScopeUser, path: inHome(".codeium", "windsurf", "hooks.json"), Shipped: "windsurf/.windsurf/hooks.json", Hooks: "hooks"},
			{What: "MCP server", Scope: ScopeUser, path: inHome(".codeium", "windsurf", "mcp_config.json"), Shipped: "windsurf/mcp_config.json", Servers: "mcpServers", Workspace: nameRoot},
		},
		notes: map[Scope][]string{
			ScopeProject: {"Windsurf reads MCP servers only from {home}/.codeium/windsurf/mcp_config.json, for every project: run agent-rewind setup windsurf --user to add agent-rewind's server there, naming {root}."},
			ScopeUser:    {"Windsurf's MCP configuration is global, so the entry names {root}: one project at a time (agent-rewind setup windsurf --user in another project moves it there)."},
		},
	},
	{
		Name:  "vscode",
		Facts: barrier.ClientOf(barrier.AgentVSCode),
		Parts: []Part{
			{What: "hooks", Scope: ScopeProject, path: inRoot(".github", "hooks", "agent-rewind.json"), Shipped: "vscode/.github/hooks/agent-rewind.json", Hooks: "hooks"},
			{What: "MCP server", Scope: ScopeProject, path: inRoot(".vscode", "mcp.json"), Shipped: "vscode/.vscode/mcp.json", Servers: "servers"},
		},
		notes: map[Scope][]string{
			ScopeUser: {"VS Code keeps its user-level MCP servers in its profile folder, which setup does not write: run agent-rewind setup vscode in the project (.github/hooks and .vscode/mcp.json)."},
		},
	},
	{
		Name:  "copilot",
		Facts: barrier.ClientOf(barrier.AgentCopilot),
		Parts: []Part{
			{What: "hooks", Scope: ScopeProject, path: inRoot(".github", "hooks", "agent-rewind.json"), Shipped: "vscode/.github/hooks/agent-rewind.json", Hooks: "hooks"},
			{What: "MCP server", Scope: ScopeProject, path: inRoot(".github", "mcp.json"), Shipped: "vscode/.github/mcp.json", Servers: "mcpServers"},
			{What: "MCP server", Scope: ScopeUser, path: inHome(".copilot", "mcp-config.json"), Shipped: "vscode/.github/mcp.json", Servers: "mcpServers"},
		},
		notes: map[Scope][]string{
			ScopeProject: {"GitHub Copilot CLI runs a folder's hooks and MCP servers only once the folder is trusted: it asks when you start it in {root}; copilot -p needs --trust-folder, or the folder among the trustedFolders of ~/.copilot/config.json (what trusting it writes)."},
			ScopeUser:    {"Copilot CLI reads hooks only from the project (.github/hooks): run agent-rewind setup copilot in {root} for them."},
		},
	},
	{
		Name:  "gemini",
		Facts: barrier.ClientOf(barrier.AgentGemini),
		Parts: []Part{
			{What: "hooks and MCP server", Scope: ScopeProject, path: inRoot(".gemini", "settings.json"), Shipped: "gemini-cli/.gemini/settings.json", Hooks: "hooks", Servers: "mcpServers"},
			{What: "hooks and MCP server", Scope: ScopeUser, path: inHome(".gemini", "settings.json"), Shipped: "gemini-cli/.gemini/settings.json", Hooks: "hooks", Servers: "mcpServers"},
		},
		notes: map[Scope][]string{
			ScopeProject: {
				"Gemini CLI reads {root}/.gemini/settings.json only when started in {root} itself (not in a subfolder) and only in a trusted folder (it asks; headless, GEMINI_CLI_TRUST_WORKSPACE=true: --skip-trust leaves the project's settings out). For sessions started anywhere, run agent-rewind setup gemini --user.",
			},
			ScopeUser: {"The hook and the server now run in every folder you start Gemini CLI in; each project gets a store of its own (the home folder itself is refused)."},
		},
	},
}

// Clients returns every client setup knows, in the order --help lists them.
func Clients() []*Client { return append([]*Client(nil), clients...) }

// ClientNamed returns the client named name (as setup takes it), or an error listing the names.
func ClientNamed(name string) (*Client, error) {
	for _, c := range clients {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no client %q: setup knows %s", name, strings.Join(ClientNames(), ", "))
}

// ClientNames are the names setup takes.
func ClientNames() []string {
	var out []string
	for _, c := range clients {
		out = append(out, c.Name)
	}
	return out
}

// ShippedUsed returns every shipped file a client's part is made from, sorted.
func ShippedUsed() []string {
	seen := map[string]bool{}
	for _, c := range clients {
		for _, p := range c.Parts {
			seen[p.Shipped] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
