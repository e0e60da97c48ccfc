package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/hookserver"
	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/statebase"
)

// HookServerCmd runs, shows or stops the guard server (cli/internal/hookserver).
type HookServerCmd struct {
	Run    HookServerRunCmd    `cmd:"" default:"1" help:"Run the guard server in the foreground (agent-rewind-hook starts one in the background on its own)."`
	Status HookServerStatusCmd `cmd:"" help:"Show whether the guard server runs: its process, build and the calls it served."`
	Stop   HookServerStopCmd   `cmd:"" help:"Stop the guard server (hooks then run the whole guard in their own process until one starts again)."`
}

// HookServerRunCmd is "hook-server run".
type HookServerRunCmd struct {
	Idle time.Duration `default:"2h" help:"Exit after this long without a call (0: never)."`
}

// Run serves until stopped, idle, or its socket goes.
func (c *HookServerRunCmd) Run(env *Env) error {
	socket, err := hookSocket()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = hookserver.Run(ctx, hookserver.Options{Socket: socket, Idle: c.Idle})
	if errors.Is(err, hookserver.ErrRunning) {
		return fmt.Errorf("%w for %s: see agent-rewind hook-server status", err, socket)
	}
	return err
}

// HookServerStatusCmd is "hook-server status".
type HookServerStatusCmd struct{}

// HookServerStatusOutput is the --json shape of "hook-server status": running, the socket, and
// the server's status (pid, version, started, served) when it runs.
type HookServerStatusOutput struct {
	Running bool   `json:"running"`
	Socket  string `json:"socket"`
	*hookserver.Status
}

// Run asks the server.
func (c *HookServerStatusCmd) Run(env *Env) error {
	socket, err := hookSocket()
	if err != nil {
		return err
	}
	st, err := hookserver.StatusOf(socket)
	if err != nil && !errors.Is(err, hookserver.ErrNotRunning) {
		return err
	}
	out := HookServerStatusOutput{Running: st != nil, Socket: socket, Status: st}
	return env.Emit(&out, func(w io.Writer) error {
		if st == nil {
			_, err := fmt.Fprintf(w, "no guard server runs on %s: hooks run the whole guard themselves (the next hook call starts one)\n", socket)
			return err
		}
		_, err := fmt.Fprintf(w, "guard server: pid %d, %s, %s served since %s, on %s\n",
			st.PID, st.Version, plural(int(st.Served), "call", "calls"), localTime(st.Started), socket)
		return err
	})
}

// HookServerStopCmd is "hook-server stop".
type HookServerStopCmd struct{}

// HookServerStopOutput is the --json shape of "hook-server stop".
type HookServerStopOutput struct {
	Stopped bool `json:"stopped"`       // a server was running and has stopped
	PID     int  `json:"pid,omitempty"` // its process
}

// Run stops the server and waits for it to go.
func (c *HookServerStopCmd) Run(env *Env) error {
	socket, err := hookSocket()
	if err != nil {
		return err
	}
	var out HookServerStopOutput
	out.PID, err = hookserver.Stop(socket)
	switch {
	case errors.Is(err, hookserver.ErrNotRunning):
	case err != nil:
		return err
	default:
		out.Stopped = true
	}
	return env.Emit(&out, func(w io.Writer) error {
		if !out.Stopped {
			_, err := fmt.Fprintln(w, "no guard server was running")
			return err
		}
		_, err := fmt.Fprintf(w, "guard server (pid %d) stopped\n", out.PID)
		return err
	})
}

// hookSocket is the guard server's socket for this process's environment (--state-dir has
// set it).
func hookSocket() (string, error) {
	s, err := hookwire.Socket(os.Getenv)
	if err != nil {
		return "", fmt.Errorf("the guard server's socket: %w (set an absolute %s, or HOME)", err, statebase.Env)
	}
	return s, nil
}

// startWait bounds how long the call that starts a guard server waits for it to listen.
const startWait = 2 * time.Second

// hookFallback is what agent-rewind runs when agent-rewind-hook hands it a call it could not
// have served (hookwire.ClientEnv is set to mode): exactly what agent-rewind-hook answers, the
// guard's command line or its usage, and, when no server answered, a server started in the
// background for the calls that follow.
func hookFallback(mode string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	wd, _ := os.Getwd()
	call, stateDir, ok := hook.ParseArgs(args, wd)
	if !ok {
		return hook.Refuse(args, stderr)
	}
	envBase, _ := statebase.Dir(os.Getenv)
	if stateDir != "" {
		os.Setenv(statebase.Env, stateDir) // as agent-rewind does: its children read it too
	}
	// A server started first serves the calls that follow; it starts the change watcher, in
	// itself, so this call starts none (it would walk the tree either way). A --state-dir other
	// than the environment's would start a server where no client looks. The server starts
	// while this call runs the guard (issue 29: waiting for it first put its start, 20 to 50 ms,
	// on the session's first call); this call waits for it only where it needs it, to hand it
	// the prompt's warm-up, and before exiting, so that the next call finds it listening.
	ready := func(time.Duration) error { return nil }
	if mode == hookwire.StartServer && (stateDir == "" || stateDir == envBase) {
		exe, err := os.Executable()
		socket, serr := hookwire.Socket(os.Getenv)
		if err == nil && serr == nil {
			if r, err := hookserver.Start(exe, socket); err == nil {
				ready = r
				call.NoWatcherStart = true
				// A prompt's warm-up (hook.Warm) is the server's to do, after this call.
				call.Warm = func(root string) {
					if ready(startWait) == nil {
						hookserver.Warm(socket, root, startWait)
					}
				}
			}
		} // correctness never depends on it: a failure is silent
	}
	code := hook.Guard(call, stdin, stdout, stderr)
	ready(startWait)
	return code
}
