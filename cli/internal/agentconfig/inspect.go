package agentconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/agent-rewind/rewind/barrier"
)

// What doctor reads of each client's files: the hooks that run agent-rewind's guard and
// whether each can fire (its event is one the client sends, its matcher lets through the tools
// the client's facts list, the program it names is there and runs), the MCP server entry and
// what it protects. The same files setup writes, in both scopes.

// ClientReport is what doctor found for one client.
type ClientReport struct {
	Client   string       `json:"client"` // as setup takes it
	Name     string       `json:"name"`
	Found    bool         `json:"found"` // any of agent-rewind's entries in any of its files
	Files    []FileReport `json:"files"` // every file of the client that exists
	Problems []Problem    `json:"problems"`
	Notes    []string     `json:"notes"`
}

// FileReport is one configuration file of a client.
type FileReport struct {
	Path    string        `json:"path"`
	Scope   Scope         `json:"scope"`
	What    string        `json:"what"`
	Error   string        `json:"error,omitempty"` // why it could not be read
	Hooks   []HookReport  `json:"hooks"`           // agent-rewind's hooks in it
	Server  *ServerReport `json:"server,omitempty"`
	ByShell bool          `json:"-"`
}

// HookReport is one hook that runs agent-rewind's guard.
type HookReport struct {
	Event    string   `json:"event"`
	Matcher  string   `json:"matcher"`          // "" for every tool
	Command  string   `json:"command"`          // the command line (exec form: program and arguments)
	Programs []string `json:"programs"`         // the programs it runs, as found
	Missed   []string `json:"missed,omitempty"` // tools the client's facts list that the matcher lets by
	Trust    string   `json:"trust,omitempty"`  // Codex: the hook's trust status, as codex app-server reports it
}

// ServerReport is agent-rewind's MCP server entry.
type ServerReport struct {
	Command   string   `json:"command"`
	Args      []string `json:"args"`
	Program   string   `json:"program"`             // the program found ("" when not)
	Workspace string   `json:"workspace,omitempty"` // the --workspace it names
	EnvVars   []string `json:"envVars,omitempty"`   // Codex: the variables env_vars passes on
}

// Problem is one thing that keeps agent-rewind from working, with the command that fixes it.
type Problem struct {
	Client  string `json:"client,omitempty"`
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

// guardCommand matches a command line that runs the guard: agent-rewind or agent-rewind-hook
// (by name or path), optionally --workspace DIR, then guard.
var guardCommand = regexp.MustCompile(`agent-rewind(-hook)?'?(\s+--workspace\s+\S+)?\s+guard\b`)

// RunsGuard reports whether a command line runs agent-rewind's guard.
func RunsGuard(cmd string) bool { return guardCommand.MatchString(cmd) }

// Inspect reads a client's files in both scopes. runs checks a program (cached by the caller).
func Inspect(c *Client, l Locations, runs func(path string) error) ClientReport {
	r := ClientReport{Client: c.Name, Name: c.Facts.Name, Files: []FileReport{}, Problems: []Problem{}, Notes: []string{}}
	events := map[string][]HookReport{}
	for _, part := range c.Parts {
		f, ok := inspectPart(c, part, l, runs)
		if !ok {
			continue
		}
		if f.Error != "" {
			r.Problems = append(r.Problems, Problem{c.Name, fmt.Sprintf("%s cannot be read: %s", f.Path, f.Error), "fix the file, then run agent-rewind setup " + c.Name + scopeFlag(part.Scope)})
		}
		for _, h := range f.Hooks {
			events[h.Event] = append(events[h.Event], h)
		}
		if len(f.Hooks) > 0 || f.Server != nil {
			r.Found = true
		}
		r.Files = append(r.Files, f)
	}
	if !r.Found {
		return r
	}
	setupCmd := "agent-rewind setup " + c.Name
	r.Problems = append(r.Problems, programProblems(c, r.Files, runs)...)
	if len(events) == 0 {
		r.Problems = append(r.Problems, Problem{c.Name, c.Facts.Name + ": agent-rewind's MCP server is set up but no hook runs the guard, so repeated effects are not refused", setupCmd})
		return r
	}
	for _, e := range missingEvents(c.Facts, events) {
		r.Problems = append(r.Problems, Problem{c.Name, fmt.Sprintf("%s: no hook of agent-rewind's on %s (%s), which the guard needs", c.Facts.Name, e.Name, e.Role), setupCmd})
	}
	r.Problems = append(r.Problems, missedProblems(c, r.Files)...)
	for _, f := range r.Files {
		for _, h := range f.Hooks {
			if strings.Contains(h.Command, "${CLAUDE_PLUGIN_ROOT}") && c.Facts.Agent == barrier.AgentClaudeCode {
				r.Problems = append(r.Problems, Problem{c.Name, fmt.Sprintf("Claude Code: the %s hook in %s runs ${CLAUDE_PLUGIN_ROOT}, copied from the plugin: outside the plugin Claude Code refuses it and blocks every call it matches (\"Hook command references ${CLAUDE_PLUGIN_ROOT} but the hook is not associated with a plugin\")", h.Event, f.Path), setupCmd + scopeFlag(f.Scope) + " (it replaces the copied hooks)"})
			}
		}
	}
	return r
}

func scopeFlag(s Scope) string {
	if s == ScopeUser {
		return " --user"
	}
	return ""
}

// inspectPart reads one part's file (ok is false when it does not exist).
func inspectPart(c *Client, part Part, l Locations, runs func(string) error) (FileReport, bool) {
	path := part.Path(l)
	f := FileReport{Path: path, Scope: part.Scope, What: part.What, Hooks: []HookReport{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, false
	}
	if err != nil {
		f.Error = err.Error()
		return f, true
	}
	switch part.format {
	case formatScript:
		if RunsGuard(string(b)) {
			f.Hooks = append(f.Hooks, scriptHooks(c, part, string(b))...)
		}
	case formatTOML:
		doc, err := parseTOML(string(b))
		if err != nil {
			f.Error = err.Error()
			return f, true
		}
		if s := doc.lookup(part.Servers, barrierServer); s != nil && s.kind == tTable {
			args, _ := s.lookup("args").strs()
			vars, _ := s.lookup("env_vars").strs()
			cmd := ""
			if v := s.lookup("command"); v != nil && v.kind == tString {
				cmd = v.str
			}
			f.Server = serverReport(cmd, args)
			f.Server.EnvVars = vars
		}
	case formatJSON:
		n, err := parseJSON(b)
		if err != nil {
			f.Error = err.Error()
			return f, true
		}
		if h := n.get(part.Hooks); h != nil && part.Hooks != "" {
			f.Hooks = jsonHooks(c, h)
		}
		if s := n.get(part.Servers).get(barrierServer); s != nil && part.Servers != "" {
			cmd, _ := s.get("command").str()
			args, _ := s.get("args").strs()
			f.Server = serverReport(cmd, args)
		}
	}
	return f, true
}

// barrierServer is the name agent-rewind's MCP server is configured under: the guard knows its
// tools as its own by it.
const barrierServer = "agent-rewind"

func serverReport(cmd string, args []string) *ServerReport {
	s := &ServerReport{Command: cmd, Args: args}
	if i := slices.Index(args, "--workspace"); i >= 0 && i+1 < len(args) {
		s.Workspace = args[i+1]
	}
	s.Program = findProgram(cmd)
	return s
}

// findProgram is a command as a path: itself when it has a slash, else as PATH finds it ("" when
// not found).
func findProgram(cmd string) string {
	if strings.Contains(cmd, "/") || cmd == "" {
		return cmd
	}
	p, err := exec.LookPath(cmd)
	if err != nil {
		return ""
	}
	return p
}

// jsonHooks reads the hooks of a JSON hooks member that run the guard: grouped entries
// ({"matcher", "hooks": [...]}, Claude Code's form) or flat ones ({"command"}).
func jsonHooks(c *Client, hooks *jnode) []HookReport {
	var out []HookReport
	for i, event := range hooks.keys {
		entries := hooks.vals[i]
		if entries.kind != jArray {
			continue
		}
		for _, e := range entries.elems {
			matcher, _ := e.get("matcher").str()
			var cmds []*jnode
			if inner := e.get("hooks"); inner != nil && inner.kind == jArray {
				cmds = inner.elems
			} else {
				cmds = []*jnode{e}
			}
			for _, h := range cmds {
				line, exec := commandLine(h)
				if !RunsGuard(line) {
					continue
				}
				out = append(out, hookReport(c, event, matcher, line, exec))
			}
		}
	}
	return out
}

// commandLine is a hook's command line: exec form's program and arguments joined, or the shell
// line; exec says which.
func commandLine(h *jnode) (line string, exec string) {
	cmd, _ := h.get("command").str()
	if args, ok := h.get("args").strs(); ok {
		return strings.Join(append([]string{cmd}, args...), " "), cmd
	}
	return cmd, ""
}

// scriptHooks are the hooks a Cline script stands for: one script serves the CLI's event and
// the extension's.
func scriptHooks(c *Client, part Part, content string) []HookReport {
	events := map[string][]string{"PreToolUse": {barrier.EventClineToolCall, barrier.EventPreToolUse}, "PostToolUse": {barrier.EventClineToolResult, barrier.EventPostToolUse}}[part.Event]
	var out []HookReport
	for _, e := range events {
		out = append(out, hookReport(c, e, "", content, ""))
	}
	return out
}

func hookReport(c *Client, event, matcher, line, execProgram string) HookReport {
	h := HookReport{Event: event, Matcher: matcher, Command: line}
	if execProgram != "" {
		h.Programs = []string{findProgram(execProgram)}
	} else {
		h.Programs = shellPrograms(line)
	}
	if c.Facts.Agent != barrier.AgentWindsurf { // one event per kind of call, no matchers
		h.Missed = missedTools(c.Facts, event, matcher)
	}
	return h
}

// shellPrograms are the agent-rewind programs a shell command line runs (by path, or by name
// as PATH finds them); a missing one is "" and named by programProblems.
func shellPrograms(line string) []string {
	var out []string
	var code []string
	for _, l := range strings.Split(line, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") { // a script's comments name no program
			code = append(code, l)
		}
	}
	line = strings.Join(code, "\n")
	for _, w := range strings.FieldsFunc(line, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ';' || r == '&' || r == '|' || r == '\n' || r == '(' || r == ')'
	}) {
		w = strings.Trim(w, "'")
		base := w[strings.LastIndex(w, "/")+1:]
		if base != "agent-rewind" && base != "agent-rewind-hook" {
			continue
		}
		p := findProgram(w)
		if p == "" {
			p = "(" + w + " not on PATH)"
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// missedTools are the tools of the client's facts that a hook on event must see and matcher
// lets by: shell and MCP tools (the effects) on every event, and before a call of a client
// that names its calls, the file-editing tools too (automatic checkpoints).
func missedTools(c *barrier.Client, event, matcher string) []string {
	role := c.Role(event)
	if role == "" || role == barrier.RoleReport || role == barrier.RolePrompt {
		return nil // no tools: a report's hook may see any; a prompt's names none
	}
	var missed []string
	for _, tool := range ToolsToMatch(c, role) {
		if !Matches(matcher, tool) {
			missed = append(missed, tool)
		}
	}
	return missed
}

// ToolsToMatch are the tools a hook of role must see for client c: its shell tools, an MCP
// tool (as the client names one), and before a call of a client that names its calls, its
// file-editing tools.
func ToolsToMatch(c *barrier.Client, role barrier.Role) []string {
	tools := append(slices.Clone(c.ShellTools), c.MCPToolName("slack", "slack_post_message"))
	if role == barrier.RoleDecide && c.Checkpoints() {
		tools = append(tools, c.FileTools...)
	}
	return tools
}

// Matches reports whether a hook matcher (a regular expression; "" or "*" for every tool) lets
// tool through, matched whole: stricter than Gemini CLI, which matches anywhere in the name. A
// matcher that is not a regular expression matches the tool's name exactly.
func Matches(matcher, tool string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	re, err := regexp.Compile(`^(?:` + matcher + `)$`)
	if err != nil {
		return matcher == tool
	}
	return re.MatchString(tool)
}

// missedProblems names, per event, the tools no hook of agent-rewind's on it lets through (a
// matcher edited away): each hook's Missed, less what another hook on the event matches.
func missedProblems(c *Client, files []FileReport) []Problem {
	type where struct {
		file     FileReport
		matchers []string
	}
	var events []string
	missed := map[string][]string{}
	seen := map[string]bool{}
	at := map[string]where{}
	for _, f := range files {
		for _, h := range f.Hooks {
			if !seen[h.Event] {
				seen[h.Event] = true
				events = append(events, h.Event)
				missed[h.Event] = h.Missed
				at[h.Event] = where{f, []string{h.Matcher}}
				continue
			}
			var still []string
			for _, tool := range missed[h.Event] {
				if slices.Contains(h.Missed, tool) {
					still = append(still, tool)
				}
			}
			missed[h.Event] = still
			w := at[h.Event]
			w.matchers = append(w.matchers, h.Matcher)
			at[h.Event] = w
		}
	}
	var out []Problem
	for _, e := range events {
		if len(missed[e]) == 0 {
			continue
		}
		w := at[e]
		out = append(out, Problem{c.Name, fmt.Sprintf("%s: agent-rewind's %s hook in %s has the matcher %q, which lets %s by unguarded",
			c.Facts.Name, e, w.file.Path, strings.Join(w.matchers, `", "`), strings.Join(missed[e], ", ")), "agent-rewind setup " + c.Name + scopeFlag(w.file.Scope)})
	}
	return out
}

// missingEvents are the events the guard needs from a client that no hook of agent-rewind's is
// on: every event but the reports, except that Cursor's preToolUse stands for its
// before*Execution pair (HOOKS.md: one or the other, never both).
func missingEvents(c *barrier.Client, have map[string][]HookReport) []barrier.Event {
	var out []barrier.Event
	for _, e := range c.Events {
		if e.Role == barrier.RoleReport || e.Role == barrier.RolePrompt || len(have[e.Name]) > 0 {
			// The prompt hook only groups calls by prompt: a setup without it still guards and
			// checkpoints, so doctor does not call it missing.
			continue
		}
		if c.Agent == barrier.AgentCursor && e.Role == barrier.RoleDecide && e.Name != barrier.EventCursorPreToolUse {
			continue
		}
		if c.Agent == barrier.AgentCline && (e.Name == barrier.EventPreToolUse || e.Name == barrier.EventPostToolUse) {
			continue // the extension's names for the scripts' events: one script serves both
		}
		out = append(out, e)
	}
	return out
}

// programProblems checks every program the client's entries run.
func programProblems(c *Client, files []FileReport, runs func(string) error) []Problem {
	var out []Problem
	seen := map[string]bool{}
	check := func(file FileReport, what, prog string) {
		key := file.Path + "\x00" + prog
		if seen[key] {
			return
		}
		seen[key] = true
		var err error
		switch {
		case prog == "" || strings.HasPrefix(prog, "("):
			err = fmt.Errorf("%s", strings.Trim(prog, "()"))
			if prog == "" {
				err = errors.New("its program is not found")
			}
		case strings.Contains(prog, "${"):
			return // a client's variable (the plugin's launcher): Inspect names that
		default:
			err = runs(prog)
		}
		if err != nil {
			out = append(out, Problem{c.Name, fmt.Sprintf("%s: %s in %s cannot run: %v", c.Facts.Name, what, file.Path, err), "agent-rewind setup " + c.Name + scopeFlag(file.Scope) + " (with agent-rewind installed: npm install -g @agent-rewind/mcp)"})
		}
	}
	for _, f := range files {
		for _, h := range f.Hooks {
			for _, p := range h.Programs {
				check(f, "the "+h.Event+" hook's program "+p, p)
			}
		}
		if f.Server != nil {
			check(f, "the MCP server's program "+f.Server.Command, f.Server.Program)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Problem < out[j].Problem })
	return out
}
