package command

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/alecthomas/kong"
)

// GuardCmd decides whether one tool call or explicit effect may run (barrier/doc.go, HOOKS.md).
// Agents run it as a hook before and after every tool call, so the path for a call that is
// not an effect finds the store, reads at most the rules file and opens nothing else: no
// ledger, no chain, and it never creates a store. With --checkpoint (the plugin's PreToolUse
// hook) it also takes the automatic checkpoint before a call that can change files
// (autocheckpoint.go), which creates the store on the first one.
type GuardCmd struct {
	Input string `arg:"" name:"json" optional:"" help:"The guard input, one JSON object: {\"key\": ..., \"payload\": ..., \"description\": ...}, or an agent's hook input. Default: standard input." placeholder:"JSON"`
	// Checkpoint is what agents' hooks pass before tool calls: one process then does both.
	Checkpoint bool `help:"Before a tool call that can change files (a hook input with a tool call id), also take an automatic checkpoint, labelled with the call; it never blocks the call (docs/agents.md)."`
}

// Run decides and answers in the caller's protocol: for hooks, exactly what barrier.Respond
// says (only exit 2 blocks Claude Code and Codex; Cursor reads JSON on stdout); for the
// explicit form, a one-line summary on stdout when admitted. With --json it prints the
// barrier.Decision instead and exits 2 on a refusal, whoever sent the input.
func (c *GuardCmd) Run(env *Env) error {
	raw, err := c.read(env)
	if err != nil {
		return err
	}
	in, perr := barrier.ParseHookInput(raw)
	if perr != nil {
		in = barrier.Input{Event: barrier.EventOf(raw)}
	}
	choice, werr := chooseWorkspace(guardSources(env, in), guardHint)
	if werr == nil {
		choice = nestedWorktree(choice, in.Folder())
	}
	if why := ignoredWorkspaceFlag(env); why != "" {
		fmt.Fprintf(env.Stderr, "agent-rewind guard: %s; workspace %s\n", why, orNone(choice.root, werr))
	}
	g := newGuard(choice.root, werr)
	g.input = raw
	defer g.close()
	o := g.guard.Run(in, perr)
	var note autoNote
	if call, ok := autoCall(in); ok && c.Checkpoint && perr == nil && o.Err == nil && !o.Decision.Refused() {
		note = g.autoCheckpoint(call, werr)
	}
	if env.JSON {
		writeAutoNote(env, in, "-", note)
		return guardJSON(env, o)
	}
	io.WriteString(env.Stdout, o.Answer.Stdout)
	io.WriteString(env.Stderr, o.Answer.Stderr)
	writeAutoNote(env, in, o.Answer.Stdout, note)
	if o.Input.Agent == barrier.AgentExplicit && o.Err == nil && !o.Decision.Refused() {
		fmt.Fprintln(env.Stdout, explicitSummary(o.Decision))
	}
	if o.Answer.ExitCode != 0 {
		return &ExitError{Code: o.Answer.ExitCode, Err: errors.New(o.Answer.Stderr), Silent: true}
	}
	return nil
}

// guardHint says what to configure when the guard finds no workspace.
const guardHint = `pass the project folder with --workspace in the hook command (for Claude Code: "${CLAUDE_PROJECT_DIR}"), or run the hook in the project`

// guardSources are the places the guard takes its workspace from, in order: a non-empty
// --workspace; the folder the hook input names (Claude Code, Codex and Gemini CLI: cwd, which
// follows a worktree; Cursor and Cline: the workspace root; Windsurf: the command's cwd), up to
// its project; then the working directory's project. Only a person's explicit input falls back
// to the working directory itself.
func guardSources(env *Env, in barrier.Input) []workspaceSource {
	wd, _ := os.Getwd()
	return []workspaceSource{
		{rule: "--workspace", folder: explicitWorkspace(env), exact: true},
		{rule: "the folder the " + string(in.Agent) + " hook input names", folder: in.Folder(), orItself: true},
		{rule: "the working directory", folder: wd, orItself: in.Agent == barrier.AgentExplicit},
	}
}

// orNone is root, or what went wrong finding it.
func orNone(root string, err error) string {
	if err != nil {
		return "not found: " + err.Error()
	}
	return root
}

// read returns the guard input: the argument, or standard input up to barrier.MaxInputSize+1
// bytes (ParseHookInput rejects more with a clear message).
func (c *GuardCmd) read(env *Env) ([]byte, error) {
	if c.Input != "" {
		return []byte(c.Input), nil
	}
	if f, ok := env.Stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&fs.ModeCharDevice != 0 {
			return nil, errors.New(`guard: no input: pass one JSON object as the argument (agent-rewind guard '{"key": "...", "payload": {...}}') or on standard input, as agents' hooks do`)
		}
	}
	data, err := io.ReadAll(io.LimitReader(env.Stdin, barrier.MaxInputSize+1))
	if err != nil {
		return nil, fmt.Errorf("guard: read standard input: %w", err)
	}
	return data, nil
}

// guardJSON prints the decision for a person or a script (--json): the barrier.Decision, or
// the usual {"error", "exitCode"} when nothing could be decided.
func guardJSON(env *Env, o barrier.Outcome) error {
	if o.Err != nil {
		code := 1
		if barrier.IsDecidingEvent(o.Input.Event) {
			code = 2 // an error while deciding, or input that could not be read, refuses (fail closed)
		}
		return &ExitError{Code: code, Err: o.Err}
	}
	if err := env.Emit(o.Decision, nil); err != nil {
		return err
	}
	if o.Decision.Refused() {
		return &ExitError{Code: 2, Err: errors.New(o.Decision.Reason), Silent: true}
	}
	return nil
}

// explicitSummary is the line printed when an explicit effect is admitted.
func explicitSummary(d barrier.Decision) string {
	s := fmt.Sprintf("%s %q: %s", d.Code, d.Key, d.State)
	if d.Seq != nil {
		s += fmt.Sprintf(" (chain entry %d)", *d.Seq)
	}
	return s
}

// guardRun holds what one guard process opened, lazily: the hot path opens nothing.
type guardRun struct {
	root  string
	guard barrier.Guard
	ws    *workspace.Workspace // opened by the rules lookup, or created by the first record
	// noStore: the workspace had no store when looked for
	noStore bool
	input   []byte // the guard input, to tell a decision from a report (ledger)
}

// newGuard prepares a guard for the workspace at root. It finds the store (workspace.Open: one
// statx and two small reads) and reads its rules file (one small file, when it exists), and
// nothing else. With werr (no workspace could be chosen), calls that are not effects are still
// answered at once, and every effect is refused with werr: recording it elsewhere, or not at
// all, is what the barrier exists to prevent.
func newGuard(root string, werr error) *guardRun {
	g := &guardRun{root: root}
	if werr != nil {
		g.guard = barrier.Guard{OpenLedger: func() (*barrier.Ledger, error) { return nil, werr }}
		return g
	}
	rules, err := g.rules()
	g.guard = barrier.Guard{
		Rules:      rules,
		RulesErr:   err,
		OpenLedger: g.ledger,
		Checkpoint: g.checkpoint,
	}
	return g
}

// rules returns the workspace's effect rules: its store's rules file over the built-in rules,
// or the built-in rules alone in a workspace that has no store yet.
func (g *guardRun) rules() (*barrier.Rules, error) {
	ws, err := g.workspace(false)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", barrier.ErrBadRules, err)
	}
	if ws == nil {
		return barrier.DefaultRules(), nil
	}
	return barrier.LoadRulesFile(ws.Path(barrier.RulesFileName))
}

// ledger opens the workspace's effect ledger, recording through g. It is called only for a
// call the rules make an effect, or the report that follows one. A decision (an admission)
// creates the store on first use, outside the workspace. A report in a workspace that has no
// store finds nothing to confirm and must create nothing (agents report after every tool
// call): it gets a ledger over a folder that does not exist, which answers "unknown" without
// writing, as a ledger does for a call it never admitted.
func (g *guardRun) ledger() (*barrier.Ledger, error) {
	ws, err := g.workspace(false)
	if err != nil {
		return nil, err
	}
	if ws == nil {
		if in, perr := barrier.ParseHookInput(g.input); perr == nil && !barrier.IsDecidingEvent(in.Event) {
			return barrier.Open(filepath.Join(g.root, workspace.LegacyDir, workspace.EffectsDir), g)
		}
		if ws, err = g.workspace(true); err != nil {
			return nil, err
		}
	}
	return ws.Ledger()
}

// Record records on the workspace's chain, creating the store (and the chain) on the first
// record; it makes guardRun the ledger's barrier.Recorder.
func (g *guardRun) Record(kind string, data any) (int64, error) {
	ws, err := g.workspace(true)
	if err != nil {
		return 0, err
	}
	return ws.Record(kind, data)
}

// Intend notes an admission's entry before the ledger commits it (workspace.Intend), so that a
// guard killed between the two leaves a note the next writer records late; it makes guardRun a
// barrier.Intender.
func (g *guardRun) Intend(kind string, data any, file string, content []byte) (record func() (int64, error), drop func(), err error) {
	ws, err := g.workspace(true)
	if err != nil {
		return nil, nil, err
	}
	return ws.Intend(kind, data, file, content)
}

// checkpoint returns the id of the current checkpoint for an admission record: "" in a
// workspace that has no store yet (and so no checkpoint), without creating it.
func (g *guardRun) checkpoint() (string, error) {
	ws, err := g.workspace(false)
	if ws == nil || err != nil {
		return "", err
	}
	s, err := ws.Snapshots(nil)
	if err != nil {
		return "", err
	}
	return s.Current()
}

// workspace opens the workspace once. With create, its store is created on first use
// (workspace.Init); without, a workspace with no store yet is (nil, nil).
func (g *guardRun) workspace(create bool) (*workspace.Workspace, error) {
	if g.ws != nil {
		return g.ws, nil
	}
	if !create && g.noStore {
		return nil, nil
	}
	var ws *workspace.Workspace
	var err error
	if create {
		ws, err = workspace.Init(g.root)
	} else {
		ws, err = workspace.Open(g.root)
		// A workspace that contains the state folder (the user's home) has no store: calls
		// that are not effects pass; an effect fails closed when Init refuses to make one.
		if errors.Is(err, workspace.ErrNotInitialized) || errors.Is(err, workspace.ErrStateInWorkspace) {
			g.noStore = true
			return nil, nil
		}
	}
	if err != nil {
		return nil, err
	}
	g.ws = ws
	return ws, nil
}

func (g *guardRun) close() {
	if g.ws != nil {
		g.ws.Close()
	}
}

// fastGuard enables guardFastPath; tests turn it off to compare with kong's parse.
var fastGuard = true

// guardFastPath runs "agent-rewind [--workspace DIR] [--json] guard [--checkpoint] [JSON]" without building
// the kong command model, which costs more than the guard's whole decision: agents' hooks run
// this command before and after every tool call, one process each. ok is false for any other
// form of arguments (help, other flags, "--", a second argument...), which Main then parses
// with kong as usual, so usage errors and --help stay kong's.
func guardFastPath(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, ok bool) {
	if !fastGuard {
		return 0, false
	}
	g, ok := parseGuardArgs(args)
	if !ok {
		return 0, false
	}
	env := &Env{Workspace: g.workspace, JSON: g.json, Stdin: stdin, Stdout: stdout, Stderr: stderr, WorkspaceFlag: g.flag, WorkspaceSet: g.flagSet}
	if err := g.cmd.Run(env); err != nil {
		return env.fail(err), true
	}
	return 0, true
}

// guardArgs is what parseGuardArgs found: the global flags and the guard command.
type guardArgs struct {
	workspace string // absolute, as kong's "path" type makes it
	flag      string // --workspace as given
	flagSet   bool
	json      bool
	cmd       GuardCmd
}

// parseGuardArgs recognises the plain forms of the guard command line. Whatever it accepts,
// kong parses to the same values (FuzzGuardArgs checks this).
func parseGuardArgs(args []string) (g guardArgs, ok bool) {
	g.workspace = "."
	seenGuard, seenArg := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--json":
			g.json = true
		case a == "--workspace" && i+1 < len(args) && plainValue(args[i+1]):
			g.workspace, g.flag, g.flagSet = args[i+1], args[i+1], true
			i++
		case strings.HasPrefix(a, "--workspace=") && plainValue(a[len("--workspace="):]):
			g.workspace = a[len("--workspace="):]
			g.flag, g.flagSet = g.workspace, true
		case a == "guard" && !seenGuard:
			seenGuard = true
		case a == "--checkpoint" && seenGuard:
			g.cmd.Checkpoint = true
		case seenGuard && !seenArg && plainValue(a):
			g.cmd.Input, seenArg = a, true
		default:
			return guardArgs{}, false
		}
	}
	if !seenGuard {
		return guardArgs{}, false
	}
	g.workspace = kong.ExpandPath(g.workspace) // as kong's "path" type does
	return g, true
}

// plainValue reports whether a is a value kong takes as it is: not empty, not a flag, and valid
// UTF-8 (kong replaces invalid bytes with U+FFFD).
func plainValue(a string) bool { return a != "" && !strings.HasPrefix(a, "-") && utf8.ValidString(a) }
