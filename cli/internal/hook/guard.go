package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// Call is one guard call: what the command line said.
type Call struct {
	Workspace     string // absolute path of --workspace (default ".")
	WorkspaceFlag string // --workspace as given: an empty or unsubstituted one is ignored
	WorkspaceSet  bool   // whether --workspace was given at all
	// ExactWorkspace: --exact-workspace, the folder itself rather than its project (Source.Exact).
	// Only agent-rewind's own parser takes it; hooks never pass it (hook.ParseArgs declines it).
	ExactWorkspace bool
	JSON           bool   // --json: print the barrier.Decision
	Checkpoint     bool   // --checkpoint: also take the automatic checkpoint (autocheckpoint.go)
	Input          string // the JSON argument; "" reads standard input
	// Dir is the caller's working directory, absolute: a guard server serves many callers, so
	// nothing of a call is read from the process (its working directory, its arguments).
	Dir string
	// NoWatcherStart: the automatic checkpoint starts no change watcher when none runs (a guard
	// server was just started for the calls that follow: it starts the watcher, in itself).
	NoWatcherStart bool
	// Maintain, set by a guard server, is handed the workspace root whose store's maintenance
	// is due after the automatic checkpoint (maintenance.go), to run after the answer; unset, a
	// process of its own is started for it.
	Maintain func(root string)
	// SyncLater, set by a guard server, makes the calls log durable after the answer, within
	// its bound (snapshot.Options.SyncLater); unset, each note is synced before the answer.
	SyncLater func(path string)
	// FlushLater, set by a guard server, takes the hash chain's deferred flush (its sidecar's
	// fsync and the anchor, hashchain.Options.SyncLater), to run within the same bound; unset,
	// each chain entry is durable whole before the answer.
	FlushLater func(key string, flush func() error)
	// Warm, set where a guard server will do it, is handed the workspace root after a prompt
	// hook, for the server to take its first checkpoint and start its watcher after the
	// answer (warm.go); unset, a prompt warms nothing up.
	Warm func(root string)
}

// Guard decides whether one tool call or explicit effect may run (barrier/doc.go, HOOKS.md) and
// returns the exit code. Agents run it as a hook before and after every tool call, so the path
// for a call that is not an effect finds the store, reads at most the rules file and opens
// nothing else: no ledger, no chain, and it never creates a store. With Checkpoint (the
// plugin's PreToolUse hook) it also takes the automatic checkpoint before a call that can
// change files, which creates the store on the first one.
//
// It answers in the caller's protocol: for hooks, exactly what barrier.Respond says (only exit
// 2 blocks Claude Code and Codex; Cursor reads JSON on stdout); for the explicit form, a
// one-line summary on stdout when admitted. With JSON it prints the barrier.Decision instead
// and exits 2 on a refusal, whoever sent the input.
func Guard(c Call, stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := ReadInput(c, stdin)
	if err != nil {
		return Fail(stdout, stderr, c.JSON, err, 1)
	}
	return GuardInput(c, in, stdout, stderr)
}

// Input is a guard call's input, read and parsed once: a guard server computes the answer it
// would give if interrupted (Interrupted) and then decides (GuardInput) from the same parse.
type Input struct {
	raw  []byte
	in   barrier.Input
	perr error // why raw is not a hook input (in then holds its client and event alone, for the answer)
}

// ReadInput reads call c's input (its argument, or stdin) and parses it.
func ReadInput(c Call, stdin io.Reader) (Input, error) {
	raw, err := c.read(stdin)
	if err != nil {
		return Input{}, err
	}
	in, perr := barrier.ParseHookInput(raw)
	if perr != nil && in.Event == "" {
		in.Event = barrier.EventOf(raw) // in names the client when ParseHookInput could tell it
	}
	return Input{raw: raw, in: in, perr: perr}, nil
}

// GuardInput is Guard for an input already read.
func GuardInput(c Call, input Input, stdout, stderr io.Writer) int {
	raw, in, perr := input.raw, input.in, input.perr
	folder := in.Folder()
	if folder != "" && !filepath.IsAbs(folder) {
		folder = filepath.Join(c.Dir, folder) // as the caller's process would resolve it
	}
	choice, werr := Choose(guardSources(c, in, folder), guardHint)
	if werr == nil {
		choice = choice.NestedWorktree(folder)
	}
	if why := IgnoredWorkspaceFlag(c.WorkspaceSet, c.WorkspaceFlag); why != "" {
		fmt.Fprintf(stderr, "agent-rewind guard: %s; workspace %s\n", why, orNone(choice.Root, werr))
	}
	g := newGuard(choice, werr)
	g.input, g.noWatcherStart, g.maintain, g.syncLater, g.flushLater, g.warm = raw, c.NoWatcherStart, c.Maintain, c.SyncLater, c.FlushLater, c.Warm
	defer g.close()
	if p, ok := promptOf(in, raw); ok {
		return g.logPrompt(p, werr, stderr)
	}
	o := g.guard.Run(in, perr)
	var note autoNote
	if call, ok := autoCall(in); ok && c.Checkpoint && perr == nil && o.Err == nil && !o.Decision.Refused() {
		note = g.autoCheckpoint(call, werr)
	}
	if c.JSON {
		writeAutoNote(stdout, stderr, true, in, "-", note)
		var chosen *Report
		if werr == nil {
			chosen = choice.Report()
		}
		return guardJSON(stdout, stderr, o, chosen)
	}
	if o.Answer.Stdout != "" { // an empty write is still a system call, on every hook
		io.WriteString(stdout, o.Answer.Stdout)
	}
	if o.Answer.Stderr != "" {
		io.WriteString(stderr, o.Answer.Stderr)
	}
	writeAutoNote(stdout, stderr, false, in, o.Answer.Stdout, note)
	if o.Input.Agent == barrier.AgentExplicit && o.Err == nil && !o.Decision.Refused() {
		fmt.Fprintln(stdout, explicitSummary(o.Decision))
	}
	return o.Answer.ExitCode
}

// Fail reports err as every agent-rewind command does, and returns code: with asJSON, one
// line {"error", "exitCode"} on stdout; otherwise "agent-rewind: err" on stderr.
func Fail(stdout, stderr io.Writer, asJSON bool, err error, code int) int {
	if asJSON {
		_ = json.NewEncoder(stdout).Encode(struct {
			Error    string `json:"error"`
			ExitCode int    `json:"exitCode"`
		}{err.Error(), code})
		return code
	}
	fmt.Fprintf(stderr, "agent-rewind: %v\n", err)
	return code
}

// Interrupted answers call c, whose input is input, as the guard answers an error while
// deciding: a deciding event is refused (exit 2, err as the reason), a report exits 1 with err
// on stderr (shown, not blocking), and with --json the usual {"error", "exitCode"}. The guard
// server computes it before deciding, for its client to print should the server stop before it
// answers: the call may have been recorded, so running it unchecked is not an option.
func Interrupted(c Call, input Input, err error, stdout, stderr io.Writer) int {
	in := input.in
	o := barrier.Outcome{Input: in, Err: err, Answer: barrier.Respond(in, barrier.Decision{}, err)}
	if c.JSON {
		return guardJSON(stdout, stderr, o, nil)
	}
	io.WriteString(stdout, o.Answer.Stdout)
	io.WriteString(stderr, o.Answer.Stderr)
	return o.Answer.ExitCode
}

// guardHint says what to configure when the guard finds no workspace.
const guardHint = `pass the project folder with --workspace in the hook command (for Claude Code: "${CLAUDE_PROJECT_DIR}"), or run the hook in the project`

// guardSources are the places the guard takes its workspace from, in order: a non-empty
// --workspace, up to its project (Choose); the folder the hook input names (Claude Code, Codex and Gemini CLI: cwd, which
// follows a worktree; Cursor and Cline: the workspace root; Windsurf: the command's cwd), up to
// its project; then the working directory's project. Only a person's explicit input falls back
// to the working directory itself.
func guardSources(c Call, in barrier.Input, folder string) []Source {
	return Exactly([]Source{
		FlagSource(c.WorkspaceSet, c.WorkspaceFlag, c.Workspace),
		{Rule: "the folder the " + string(in.Agent) + " hook input names", Folder: folder, OrItself: true},
		{Rule: "the working directory", Folder: c.Dir, OrItself: in.Agent == barrier.AgentExplicit},
	}, c.ExactWorkspace)
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
func (c Call) read(stdin io.Reader) ([]byte, error) {
	if c.Input != "" {
		return []byte(c.Input), nil
	}
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&fs.ModeCharDevice != 0 {
			return nil, errors.New(`guard: no input: pass one JSON object as the argument (agent-rewind guard '{"key": "...", "payload": {...}}') or on standard input, as agents' hooks do`)
		}
	}
	data, err := io.ReadAll(io.LimitReader(stdin, barrier.MaxInputSize+1))
	if err != nil {
		return nil, fmt.Errorf("guard: read standard input: %w", err)
	}
	return data, nil
}

// guardOutput is what guard --json prints: the barrier.Decision, and the workspace chosen and
// why (absent when none could be).
type guardOutput struct {
	barrier.Decision
	WorkspaceChoice *Report `json:"workspaceChoice,omitempty"`
}

// guardJSON prints the decision for a person or a script (--json), with the workspace chosen
// (nil: none), or the usual {"error", "exitCode"} when nothing could be decided.
func guardJSON(stdout, stderr io.Writer, o barrier.Outcome, chosen *Report) int {
	if o.Err != nil {
		code := 1
		if barrier.IsDecidingEvent(o.Input.Event) {
			code = 2 // an error while deciding, or input that could not be read, refuses (fail closed)
		}
		return Fail(stdout, stderr, true, o.Err, code)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(guardOutput{o.Decision, chosen}); err != nil {
		return Fail(stdout, stderr, true, err, 1)
	}
	if o.Decision.Refused() {
		return 2
	}
	return 0
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
	// at is the chosen workspace, its store not yet opened; looked and has say what choosing it
	// found (Choice.Workspace), so that the store is looked up once per call.
	at          *workspace.Workspace
	looked, has bool
	ws          *workspace.Workspace // opened by the rules lookup, or created by the first record
	// noStore: the workspace had no store when looked for
	noStore bool
	input   []byte // the guard input, to tell a decision from a report (ledger)
	// noWatcherStart: Call.NoWatcherStart
	noWatcherStart bool
	maintain       func(root string)                    // Call.Maintain
	syncLater      func(path string)                    // Call.SyncLater
	flushLater     func(key string, flush func() error) // Call.FlushLater
	warm           func(root string)                    // Call.Warm
}

// newGuard prepares a guard for the chosen workspace. It finds the store (one statx and two
// small reads, made once while choosing) and reads its rules file (one small file, when it
// exists), and nothing else. With werr (no workspace could be chosen), calls that are not
// effects are still answered at once, and every effect is refused with werr: recording it
// elsewhere, or not at all, is what the barrier exists to prevent.
func newGuard(choice Choice, werr error) *guardRun {
	g := &guardRun{root: choice.Root}
	if werr == nil {
		g.at, g.looked, g.has, werr = choice.Workspace()
	}
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
		if in, perr := barrier.ParseHookInput(g.input); perr == nil && !in.Deciding() {
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
func (g *guardRun) workspace(create bool) (ws *workspace.Workspace, err error) {
	defer func() {
		if ws != nil { // set on each return: newGuard opens the store before the call's fields are set
			ws.ChainSyncLater = g.flushLater
		}
	}()
	if g.ws != nil {
		return g.ws, nil
	}
	if !create && (g.noStore || g.looked && !g.has) {
		g.noStore = true
		return nil, nil
	}
	if g.at == nil { // no workspace was chosen: newGuard's werr refuses every effect first
		return nil, errors.New("no workspace was chosen")
	}
	if create {
		// A fresh At: the one the choice probed may hold a failed open's state.
		ws, err := workspace.Init(g.root)
		if err != nil {
			return nil, err
		}
		g.ws = ws
		return ws, nil
	}
	err = g.at.OpenStore(false)
	// A workspace that contains the state folder (the user's home) has no store: calls that
	// are not effects pass; an effect fails closed when Init refuses to make one.
	if errors.Is(err, workspace.ErrNotInitialized) || errors.Is(err, workspace.ErrStateInWorkspace) {
		g.noStore = true
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	g.ws = g.at
	return g.ws, nil
}

func (g *guardRun) close() {
	if g.ws != nil {
		g.ws.Close()
	}
}
