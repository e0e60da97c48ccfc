package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/workspace"

	"github.com/alecthomas/kong"
)

// CLI is the root of the command tree.
type CLI struct {
	Globals `embed:""`

	Version VersionCmd `cmd:"" help:"Print the version of agent-rewind and of the Go toolchain that built it."`
	Chain   ChainCmd   `cmd:"" help:"Verify, prove, sign and export the tamper-evident hash chain. Details: docs/chain.md."`

	Checkpoint CheckpointCmd `cmd:"" help:"Capture the whole workspace (every file, directory, symlink and mode) as a checkpoint; prints its id. Details: docs/checkpoints.md."`
	Rewind     RewindCmd     `cmd:"" help:"Restore any checkpoint exactly, after checkpointing the state you leave (so the rewind can be undone). Details: docs/checkpoints.md."`
	Restore    RestoreCmd    `cmd:"" help:"Restore chosen files or folders from a checkpoint, leaving every other path and the position alone (checkpointing the state before). Details: docs/checkpoints.md."`
	Replay     ReplayCmd     `cmd:"" help:"Move forward to a checkpoint recorded after the current position, such as a rewind's safety checkpoint. Details: docs/checkpoints.md."`
	List       ListCmd       `cmd:"" help:"Show the timeline of checkpoints, marking the current position (a graph in a terminal). Details: docs/checkpoints.md."`
	Diff       DiffCmd       `cmd:"" help:"Show the paths added, modified, deleted or changed in mode or type between a checkpoint and the workspace, or two checkpoints. Details: docs/checkpoints.md."`
	GC         GCCmd         `cmd:"" name:"gc" help:"Remove old checkpoints (--keep-last, --keep-within) and contents no kept checkpoint needs; with --orphans, the stores whose workspace is gone. Details: docs/checkpoints.md."`
	Check      CheckCmd      `cmd:"" help:"Verify the whole store: every checkpoint, manifest and stored content, the stat cache against the files, the hash chain. Exit 0 when all agree, 1 otherwise. Details: docs/check.md."`
	Watch      WatchCmd      `cmd:"" help:"Run, show or stop the workspace's change watcher, which lets a checkpoint look only at what changed (Linux and Windows; started by checkpoints). Details: docs/watch.md."`
	UI         UICmd         `cmd:"" name:"ui" help:"Serve a local web page of the workspace's history: timeline, diffs, restore, effects, the chain's proof, savings (127.0.0.1 only). Details: docs/ui.md."`
	HookServer HookServerCmd `cmd:"" name:"hook-server" help:"Run, show or stop the per-user guard server that answers agent-rewind-hook's calls from a warm process (the hook starts it). Details: docs/agents.md."`
	Store      StoreCmd      `cmd:"" help:"Print where the workspace's store is (outside the workspace), its id, identity and size; --adopt continues an earlier folder's history. Details: docs/store.md."`
	Setup      SetupCmd      `cmd:"" help:"Write an agent client's MCP and hook configuration for this project, with absolute paths; --remove takes out exactly what it added. Details: docs/agents.md."`
	Doctor     DoctorCmd     `cmd:"" help:"Check, for this folder, the store, the guard server, the watcher, each client's integration and the chain; each problem with the command that fixes it. Exit 0 when all is well, 1 otherwise. Details: docs/agents.md."`

	Guard   GuardCmd   `cmd:"" help:"Decide whether a tool call or an explicit effect may run (agents' hooks call it): exit 0 allowed, 2 refused. Details: docs/barrier.md."`
	Release ReleaseCmd `cmd:"" help:"Re-arm an effect key after reconciling what happened (a person's action, recorded on the chain). Details: docs/barrier.md."`
	Effects EffectsCmd `cmd:"" help:"List the effect ledger: each key's state, first use, checkpoint and tool call. Details: docs/barrier.md."`

	CacheReport  CacheReportCmd  `cmd:"" name:"cache-report" help:"Report on a request body's prompt caching: where an Anthropic cache breakpoint would go and why, or what OpenAI's automatic prefix caching holds (no model call, no workspace). Details: docs/offline-tools.md."`
	Prune        PruneCmd        `cmd:"" name:"prune" help:"Replace repeated identical tool results in a request body with references to the first one; the body goes to stdout, a summary to stderr. Details: docs/offline-tools.md."`
	CacheCompare CacheCompareCmd `cmd:"" name:"cache-compare" help:"Compare two consecutive request bodies' cacheable prefixes: unchanged, appended, or where they diverge. Details: docs/offline-tools.md."`
	Analyze      AnalyzeCmd      `cmd:"" name:"analyze" help:"Count the exact-repeat opportunities in a capture of provider traffic (an attested report; no model call, no workspace). Details: docs/offline-tools.md."`

	Help       HelpCmd       `cmd:"" help:"Show the help of agent-rewind, or of a command: agent-rewind help chain verify."`
	Completion CompletionCmd `cmd:"" help:"Print a shell completion script for bash, zsh or fish; its help says how to load it. Details: docs/install.md."`

	MCP     MCPCmd       `cmd:"" name:"mcp" help:"Serve the MCP tools (checkpoint, rewind, guard_effect, ...) over stdio to a coding agent, until stdin closes. Details: docs/mcp.md."`
	Gateway GatewayGroup `cmd:"" name:"gateway" help:"Run the token-saving reverse proxy in front of the Anthropic or OpenAI API: exact replay, cache preservation, pruning, the durable tape; migrate and keys for a team gateway. Details: docs/gateway.md."`
	Savings SavingsCmd   `cmd:"" name:"savings" help:"Print the gateway's replay-savings receipt (savings.json in the store): replay savings only. Details: docs/gateway.md."`
}

// Globals are the flags every command takes.
type Globals struct {
	Workspace      string `help:"The project folder, or a folder in it: the workspace is the nearest folder at or above it that has a store, else the top level of its repository, else the folder itself (docs/agents.md, \"Which folder: the rules\")." default:"." type:"path" placeholder:"DIR"`
	ExactWorkspace bool   `name:"exact-workspace" help:"Take --workspace (or the working directory) itself as the workspace: a subfolder of a repository on its own (its store then makes every entry point choose it), or a folder refused as not a project, such as the home folder."`
	StateDir       string `name:"state-dir" help:"Folder of every workspace's store (default: $REWIND_STATE_DIR, else $XDG_STATE_HOME/agent-rewind, else ~/.local/state/agent-rewind; on macOS ~/Library/Application Support/agent-rewind; on Windows %LOCALAPPDATA%\\agent-rewind, XDG unread). It must be outside the workspace." type:"path" placeholder:"DIR"`
	JSON           bool   `help:"Write machine-readable JSON to stdout instead of text."`
}

// workspaceFlag returns the last --workspace value among args as given (before "--"), and
// whether there was one.
func workspaceFlag(args []string) (value string, set bool) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return value, set
		case a == "--workspace" && i+1 < len(args):
			value, set = args[i+1], true
			i++
		case strings.HasPrefix(a, "--workspace="):
			value, set = a[len("--workspace="):], true
		}
	}
	return value, set
}

// lazyModel enables chosenCommand; tests turn it off to compare with the whole model.
var lazyModel = true

// newParser builds kong's parser of args into cli: of the global flags and the chosen command
// alone when chosenCommand finds it, else of the whole command tree.
func newParser(cli *CLI, args []string, opts ...kong.Option) (*kong.Kong, error) {
	if cmd, ok := chosenCommand(cli, args); ok && lazyModel {
		return kong.New(&cli.Globals, append(opts, cmd)...)
	}
	return kong.New(cli, opts...)
}

// chosenCommand returns the command args name as kong's only command, for a model of the global
// flags and that command alone: reflecting over every command's flags and help costs most
// commands more than their work. ok is false when kong needs the whole model: no command word,
// one that names no command (kong suggests one), --help, or anything unusual before the word.
func chosenCommand(cli *CLI, args []string) (kong.Option, bool) {
	// Only the plain forms of the global flags may come before the command word.
	word, found := "", false
	for i := 0; i < len(args) && !found; i++ {
		switch a := args[i]; {
		case a == "--json" || a == "--exact-workspace":
		case (a == "--workspace" || a == "--state-dir") && i+1 < len(args) && hook.PlainValue(args[i+1]):
			i++
		case strings.HasPrefix(a, "--workspace=") || strings.HasPrefix(a, "--state-dir="):
		case hook.PlainValue(a):
			word, found = a, true
		default:
			return nil, false
		}
	}
	if !found || slices.Contains(args, "--help") || slices.Contains(args, "-h") {
		return nil, false
	}
	f, v, ok := commandField(cli, word)
	if !ok {
		return nil, false
	}
	return kong.DynamicCommand(word, f.Tag.Get("help"), "", v.Addr().Interface(), string(f.Tag)), true
}

// commandField returns the field of cli that holds the command named name.
func commandField(cli *CLI, name string) (reflect.StructField, reflect.Value, bool) {
	v := reflect.ValueOf(cli).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); !isCmd {
			continue
		}
		n, ok := f.Tag.Lookup("name")
		if !ok {
			n = strings.ToLower(f.Name)
		}
		if n == name {
			return f, v.Field(i), true
		}
	}
	return reflect.StructField{}, reflect.Value{}, false
}

// kongOptions are the parser's options: its name, description, the streams, and exits through
// exitPanic.
func kongOptions(env *Env) []kong.Option {
	return []kong.Option{
		kong.Name("agent-rewind"),
		kong.Description("Checkpoint and rewind a coding agent's whole workspace, refuse repeated external effects, and keep a tamper-evident chain of both."),
		kong.Writers(env.Stdout, env.Stderr),
		kong.Exit(func(c int) { panic(exitPanic(c)) }),
		kong.ShortUsageOnError(),
	}
}

// exitPanic carries kong's requested exit code out of Parse (for --help and usage errors) so
// that Main can return it instead of ending the process: tests call Main in-process.
type exitPanic int

// Main parses args, runs the chosen command and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// agent-rewind-hook hands over a call it could not have served (hookFallback).
	if mode, ok := os.LookupEnv(hookwire.ClientEnv); ok {
		os.Unsetenv(hookwire.ClientEnv)
		return hookFallback(mode, args, stdin, stdout, stderr)
	}
	// Agents' hooks run "guard" before and after every tool call: it skips building the kong
	// model (see guardFastPath).
	if code, ok := guardFastPath(args, stdin, stdout, stderr); ok {
		return code
	}
	var cli CLI
	parser, err := newParser(&cli, args, kongOptions(&Env{Stdout: stdout, Stderr: stderr})...)
	if err != nil { // a malformed command struct: a bug in this program, not in the input
		fmt.Fprintf(stderr, "agent-rewind: internal error building the command line: %v\n", err)
		return 1
	}
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(exitPanic)
			if !ok {
				panic(r)
			}
			code = int(c)
		}
	}()
	ctx, err := parser.Parse(args)
	if err != nil {
		if mcpUsageError(err, stderr) {
			return 1
		}
		parser.FatalIfErrorf(err) // prints usage and the error, exits 80 through exitPanic
		return 1
	}
	if cli.StateDir != "" {
		// The store's whole code path, and every process this one starts, read it from there.
		os.Setenv(workspace.StateDirEnv, cli.StateDir)
	}
	env := &Env{Workspace: cli.Workspace, ExactWorkspace: cli.ExactWorkspace, JSON: cli.JSON, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	env.WorkspaceFlag, env.WorkspaceSet = workspaceFlag(args)
	if err := ctx.Run(env); err != nil {
		return env.fail(err)
	}
	return 0
}

// Env is what every command's Run receives: the global flags and the standard streams.
type Env struct {
	Workspace string // absolute path of the workspace root (--workspace, default ".")
	JSON      bool   // --json

	// WorkspaceFlag is --workspace as given, and WorkspaceSet whether it was given at all: kong
	// turns an empty value into the default ".", which the guard and the MCP server must not
	// take silently (an unset $CLAUDE_PROJECT_DIR expands to "").
	WorkspaceFlag string
	WorkspaceSet  bool
	// ExactWorkspace is --exact-workspace: the folder itself, not its project (choice).
	ExactWorkspace bool
	chosen         *hook.Choice // the workspace chosen, once a command asked (choice)

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Emit writes v to stdout as one indented JSON document when --json is set; otherwise it calls
// text to write the readable form.
func (e *Env) Emit(v any, text func(w io.Writer) error) error {
	if e.JSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return text(e.Stdout)
}

// ExitError is an error with its own exit code: 2 for a refusal, 1 for a failure that has
// already been reported in full (Silent).
type ExitError struct {
	Code   int
	Err    error
	Silent bool // the command already wrote everything the user needs; print nothing more
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// fail reports err and returns its exit code.
func (e *Env) fail(err error) int {
	code := 1
	var xe *ExitError
	if errors.As(err, &xe) {
		code = xe.Code
		if xe.Silent {
			return code
		}
	}
	return hook.Fail(e.Stdout, e.Stderr, e.JSON, err, code)
}
