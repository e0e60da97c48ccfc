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

	"github.com/agent-rewind/rewind/cli/internal/watch"
)

// WatchCmd runs, shows or stops the workspace's change watcher.
type WatchCmd struct {
	Run    WatchRunCmd    `cmd:"" default:"1" help:"Run the change watcher in the foreground (checkpoints start one in the background on their own)."`
	Status WatchStatusCmd `cmd:"" help:"Show whether a change watcher runs for the workspace, its process and what it watches."`
	Stop   WatchStopCmd   `cmd:"" help:"Stop the workspace's change watcher (checkpoints then walk the tree until one starts again)."`
}

// WatchRunCmd is "watch run".
type WatchRunCmd struct {
	Idle time.Duration `default:"2h" help:"Exit after this long without a checkpoint asking (0: never)."`
}

// Run watches until stopped, idle, or the workspace's folder goes.
func (c *WatchRunCmd) Run(env *Env) error {
	ws, err := openWorkspace(env)
	if err != nil {
		return err
	}
	root, store := ws.Root, ws.Meta
	ws.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = watch.Run(ctx, watch.Options{Root: root, Store: store, Idle: c.Idle})
	if errors.Is(err, watch.ErrRunning) {
		return fmt.Errorf("%w: see agent-rewind watch status", err)
	}
	return err
}

// WatchStatusOutput is the --json shape of "watch status": running, and the watcher's reply
// (id, pid, root, started, watchedDirs, mountNS) when it runs.
type WatchStatusOutput struct {
	Running bool `json:"running"`
	*watch.Reply
	Supported bool `json:"supported"` // false where there is no watcher (checkpoints walk the tree)
	// Off says why checkpoints do not use a watcher here ("" when they do): none on this
	// system, REWIND_WATCH=off, or off by default (Windows, without REWIND_WATCH=on).
	Off string `json:"off,omitempty"`
}

// Run asks the watcher.
func (c *WatchStatusCmd) Run(env *Env) error {
	store, err := watchStore(env)
	if err != nil {
		return err
	}
	out := WatchStatusOutput{Supported: watch.Supported, Off: watch.Off()}
	r, err := watch.Ask(store, watch.Request{Op: "status"}, 5*time.Second)
	if err != nil && !errors.Is(err, watch.ErrNotRunning) {
		return err
	}
	out.Running, out.Reply = r != nil, r
	return env.Emit(&out, func(w io.Writer) error {
		if r == nil && out.Off != "" {
			_, err := fmt.Fprintf(w, "no watcher runs for this workspace, and checkpoints start none: %s\n", out.Off)
			return err
		}
		if r == nil {
			_, err := fmt.Fprintln(w, "no watcher runs for this workspace: checkpoints walk the whole tree (the next checkpoint starts one)")
			return err
		}
		_, err := fmt.Fprintf(w, "watcher %s: pid %d, %s of %s watched, since %s\n",
			r.ID, r.PID, plural(r.Watched, "directory", "directories"), r.Root, localTime(r.Started))
		return err
	})
}

// WatchStatusCmd is "watch status".
type WatchStatusCmd struct{}

// WatchStopCmd is "watch stop".
type WatchStopCmd struct{}

// WatchStopOutput is the --json shape of "watch stop".
type WatchStopOutput struct {
	Stopped bool `json:"stopped"`       // a watcher was running and has stopped
	PID     int  `json:"pid,omitempty"` // its process
}

// Run stops the watcher and waits for it to go.
func (c *WatchStopCmd) Run(env *Env) error {
	store, err := watchStore(env)
	if err != nil {
		return err
	}
	var out WatchStopOutput
	r, err := watch.Ask(store, watch.Request{Op: "stop"}, 5*time.Second)
	switch {
	case errors.Is(err, watch.ErrNotRunning):
	case err != nil:
		return err
	default:
		out.Stopped, out.PID = true, r.PID
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := watch.Ask(store, watch.Request{Op: "status"}, time.Second); errors.Is(err, watch.ErrNotRunning) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the watcher (pid %d) did not stop within 5s: end it with kill %d", r.PID, r.PID)
			}
		}
	}
	return env.Emit(&out, func(w io.Writer) error {
		if !out.Stopped {
			_, err := fmt.Fprintln(w, "no watcher was running")
			return err
		}
		_, err := fmt.Fprintf(w, "watcher (pid %d) stopped\n", out.PID)
		return err
	})
}

// watchStore is the workspace's store, for the watcher's socket.
func watchStore(env *Env) (string, error) {
	ws, err := openWorkspace(env)
	if err != nil {
		return "", err
	}
	defer ws.Close()
	return ws.Meta, nil
}
