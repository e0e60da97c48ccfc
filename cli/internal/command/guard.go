package command

import (
	"errors"
	"io"
	"os"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// GuardCmd decides whether one tool call or explicit effect may run: hook.Guard, which the
// small hook binary (cli/cmd/agent-rewind-hook) runs too.
type GuardCmd struct {
	Input string `arg:"" name:"json" optional:"" help:"The guard input, one JSON object: {\"key\": ..., \"payload\": ..., \"description\": ...}, or an agent's hook input. Default: standard input." placeholder:"JSON"`
	// Checkpoint is what agents' hooks pass before tool calls: one process then does both.
	Checkpoint bool `help:"Before a tool call that can change files (a hook input with a tool call id), also take an automatic checkpoint, labelled with the call; it never blocks the call (docs/agents.md)."`
}

// errGuardExit carries hook.Guard's exit code: it has already written everything.
var errGuardExit = errors.New("guard")

// Run runs hook.Guard with the global flags.
func (c *GuardCmd) Run(env *Env) error {
	wd, _ := os.Getwd() // none (a removed folder): the guard then needs --workspace or the input's
	call := hook.Call{
		Workspace: env.Workspace, WorkspaceFlag: env.WorkspaceFlag, WorkspaceSet: env.WorkspaceSet, ExactWorkspace: env.ExactWorkspace,
		JSON: env.JSON, Checkpoint: c.Checkpoint, Input: c.Input, Dir: wd,
	}
	if code := hook.Guard(call, env.Stdin, env.Stdout, env.Stderr); code != 0 {
		return &ExitError{Code: code, Err: errGuardExit, Silent: true}
	}
	return nil
}

// fastGuard enables guardFastPath; tests turn it off to compare with kong's parse.
var fastGuard = true

// guardFastPath runs the guard's command line (hook.Usage) without building the kong command
// model, which costs more than the guard's whole decision: agents' hooks run this command
// before and after every tool call, one process each. ok is false for any other form of
// arguments (help, other flags, "--", a second argument...), which Main then parses with kong
// as usual, so usage errors and --help stay kong's.
func guardFastPath(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, ok bool) {
	if !fastGuard {
		return 0, false
	}
	wd, _ := os.Getwd()
	call, stateDir, ok := hook.ParseArgs(args, wd)
	if !ok {
		return 0, false
	}
	if stateDir != "" {
		os.Setenv(workspace.StateDirEnv, stateDir) // as Main does
	}
	return hook.Guard(call, stdin, stdout, stderr), true
}
