package watch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/unixsock"
	"github.com/agent-rewind/rewind/internal/detach"
	"github.com/agent-rewind/rewind/internal/durable"
)

// ErrNotRunning is returned by Ask when no watcher listens for the store.
var ErrNotRunning = errors.New("no watcher is running for this workspace")

// Ask sends one request to the store's watcher and returns its reply: over its socket, or
// directly when the watcher runs in this process (InProcess).
func Ask(store string, req Request, timeout time.Duration) (*Reply, error) {
	if r, ok := askLocal(store, req); ok {
		if r.Error != "" {
			return nil, fmt.Errorf("the watcher: %s", r.Error)
		}
		return &r, nil
	}
	c, err := unixsock.Dial(sockPath(store), timeout)
	if errors.Is(err, unixsock.ErrNoServer) {
		return nil, ErrNotRunning
	} else if err != nil {
		return nil, fmt.Errorf("reach the watcher: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return nil, fmt.Errorf("ask the watcher: %w", err)
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, fmt.Errorf("the watcher did not answer within %s: %w", timeout, err)
	} else if err != nil {
		return nil, fmt.Errorf("read the watcher's answer: %w", err)
	}
	var r Reply
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("the watcher's answer is not JSON: %w", err)
	}
	if r.Error != "" {
		return nil, fmt.Errorf("the watcher: %s", r.Error)
	}
	return &r, nil
}

// Start starts a watcher for the workspace root in the background ("agent-rewind watch run"),
// detached from the caller's session and output, and waits up to wait for it to answer. One
// that exits at start says why in the error (the inotify limits, a file system it cannot
// watch): what it wrote on its standard error, which goes to a file no one else sees.
func Start(store, root string, wait time.Duration) (*Reply, error) {
	if err := os.MkdirAll(dir(store), 0o700); err != nil {
		return nil, fmt.Errorf("start the watcher: %w", err)
	}
	errs, err := errFile(dir(store))
	if err != nil {
		return nil, fmt.Errorf("start the watcher: %w", err)
	}
	defer errs.Close()
	cmd, err := spawn(root, errs)
	if err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it exits while we wait; else it is reparented
	deadline := time.Now().Add(wait)
	for {
		r, err := Ask(store, Request{Op: "status"}, time.Second)
		if err == nil {
			return r, nil
		}
		select {
		case err := <-exited:
			// Another watcher may have won the race: then it answers.
			if r, aerr := Ask(store, Request{Op: "status"}, time.Second); aerr == nil {
				return r, nil
			}
			return nil, fmt.Errorf("the watcher exited at start (%v): %s", err, lastLine(errs))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the watcher did not answer within %s", wait)
		}
	}
}

// lastLine is the last line f holds (what an exiting agent-rewind wrote last: its error),
// without the program's name.
func lastLine(f *os.File) string {
	b := make([]byte, 16<<10)
	n, _ := f.ReadAt(b, 0)
	lines := strings.Split(strings.TrimSpace(string(b[:n])), "\n")
	last := strings.TrimPrefix(lines[len(lines)-1], "agent-rewind: ")
	if last == "" {
		return "it said nothing"
	}
	return last
}

// Position is the last checkpoint taken with a watcher's token (taken before its capture).
type Position struct {
	Checkpoint string `json:"checkpoint"`
	Token      string `json:"token"`
}

// ReadPosition reads the store's watch/position; none yields the zero Position.
func ReadPosition(store string) Position {
	var p Position
	b, err := os.ReadFile(filepath.Join(dir(store), "position"))
	if err == nil && json.Unmarshal(b, &p) != nil {
		p = Position{} // damaged: as if none (the checkpoint then walks the tree)
	}
	return p
}

// WritePosition records that checkpoint id was taken after token was given. When the store
// already says exactly that (an automatic checkpoint that reused the position, with a watcher
// that saw nothing since), it writes nothing. It replaces the file atomically but does not sync
// it: the position is a hint, and whatever a crash leaves (the previous position, an empty or
// torn file) makes the next checkpoint walk the tree (ReadPosition, Hint), so two fsyncs on
// every checkpoint that changed something would buy nothing.
func WritePosition(store, id, token string) error {
	b, err := json.Marshal(Position{Checkpoint: id, Token: token})
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(filepath.Join(dir(store), "position")); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := os.MkdirAll(dir(store), 0o700); err != nil {
		return err
	}
	return durable.WriteFileUnsynced(filepath.Join(dir(store), "position"), b, 0o600)
}

// Program returns the agent-rewind binary, which runs the watcher ("watch run") and a hook's
// first checkpoint in the background: this process's own executable, unless a binary that
// runs neither (agent-rewind-hook) points it elsewhere.
var Program = os.Executable

// watcherArgs are the arguments of the watcher of root (replace.go knows it by them).
func watcherArgs(root string) []string {
	return []string{"--workspace", root, "--exact-workspace", "watch", "run"}
}

// spawn starts "agent-rewind watch run" for root, detached from the caller's session and
// output (its standard error goes to stderr, when not nil), and returns without waiting for
// it. root was chosen already (by the rule every entry point follows), so the watcher takes it
// exactly: a home folder a person chose with --exact-workspace is not refused again.
func spawn(root string, stderr *os.File) (*exec.Cmd, error) {
	exe, err := Program()
	if err != nil {
		return nil, fmt.Errorf("start the watcher: %w", err)
	}
	cmd := exec.Command(exe, watcherArgs(root)...)
	detach.Set(cmd)
	cmd.Dir = "/" // not holding the workspace (or any folder) as its working directory
	if stderr != nil {
		cmd.Stderr = stderr // a file: passed as it is, with no goroutine copying it
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the watcher: %w", err)
	}
	return cmd, nil
}

// InProcess makes the watchers this process starts for hooks run in this process rather than
// as processes of their own: the guard server (agent-rewind hook-server) sets it, so that the
// automatic checkpoint before a tool call asks its watcher without a connection, a process
// switch or JSON. Such a watcher serves the store's socket as any does, and ends with the
// server.
var InProcess bool

// inProcessIdle is an in-process watcher's idle period, as "watch run"'s default.
const inProcessIdle = 2 * time.Hour

// startDetached starts a watcher for root (whose store is store) and does not wait for it (a
// hook must not): it outlives the caller, and a second one started by a racing caller exits at
// once on the lock. With InProcess it runs in this process.
func startDetached(root, store string) error {
	if InProcess {
		go Run(context.Background(), Options{Root: root, Store: store, Idle: inProcessIdle})
		return nil
	}
	cmd, err := spawn(root, nil)
	if err != nil {
		return err
	}
	return cmd.Process.Release()
}

// Ensure starts a watcher for root (whose store is store) in the background when none runs, and
// does not wait for it: the guard server's warm-up, so that the next checkpoint finds it.
func Ensure(root, store string) {
	if Off() != "" {
		return
	}
	if _, err := Ask(store, Request{Op: "status"}, askTimeout); errors.Is(err, ErrNotRunning) {
		startDetached(root, store)
	}
}
