package hookserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/unixsock"
	"github.com/agent-rewind/rewind/internal/detach"
)

// ErrNotRunning is returned when no guard server answers on the socket.
var ErrNotRunning = errors.New("no guard server is running")

// Ask sends one request of op (status or stop) to the server on socket and returns its answer.
func Ask(socket, op string, timeout time.Duration) (*hookwire.Answer, error) {
	c, err := unixsock.Dial(socket, timeout)
	if errors.Is(err, unixsock.ErrNoServer) {
		return nil, ErrNotRunning
	} else if err != nil {
		return nil, fmt.Errorf("reach the guard server at %s: %w", socket, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(hookwire.AppendRequest(nil, &hookwire.Request{Op: op, Version: hookwire.Version()})); err != nil {
		return nil, fmt.Errorf("ask the guard server at %s: %w", socket, err)
	}
	p, err := hookwire.ReadMessage(c)
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		// Closed before any answer: the server was stopping or was killed as it accepted.
		return nil, fmt.Errorf("%w (the server at %s closed the connection without answering: it stopped)", ErrNotRunning, socket)
	}
	if err != nil {
		return nil, fmt.Errorf("read the guard server's answer (%s): %w", socket, err)
	}
	return hookwire.DecodeAnswer(p)
}

// StatusOf returns the status of the server on socket, or ErrNotRunning.
func StatusOf(socket string) (*Status, error) {
	a, err := Ask(socket, hookwire.OpStatus, 5*time.Second)
	if err != nil {
		return nil, err
	}
	var st Status
	if a.Kind != hookwire.Result || json.Unmarshal(a.Stdout, &st) != nil {
		return nil, fmt.Errorf("the guard server at %s gave an unreadable status (%c %q)", socket, a.Kind, a.Stdout)
	}
	return &st, nil
}

// Stop stops the server on socket and waits for it to go; it returns its pid, or ErrNotRunning.
func Stop(socket string) (int, error) {
	st, err := StatusOf(socket)
	if err != nil {
		return 0, err
	}
	if _, err := Ask(socket, hookwire.OpStop, 5*time.Second); err != nil && !errors.Is(err, ErrNotRunning) {
		return 0, err
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := StatusOf(socket); errors.Is(err, ErrNotRunning) {
			return st.PID, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the guard server (pid %d) did not stop within 5s: end it with kill %d", st.PID, st.PID)
		}
	}
}

// Start starts "program hook-server run" in a session of its own, with this process's
// environment less hookwire.ClientEnv; it outlives the caller. The server takes a few tens of
// milliseconds to listen, so Start does not wait for it: the caller does its own work first
// and then calls ready, which waits up to wait for the server to answer on socket (or to
// exit: a racing caller's server won the lock), so that the call that starts a server pays
// the longer of the two, not their sum, and leaves nothing half started behind it: when ready
// returns, the server listens, or has gone.
func Start(program, socket string) (ready func(wait time.Duration) error, err error) {
	cmd := exec.Command(program, "hook-server", "run")
	detach.Set(cmd) // stdin, stdout and stderr: the null device
	cmd.Dir = "/"   // holding no folder as its working directory
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, hookwire.ClientEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the guard server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	var result error
	return func(wait time.Duration) error {
		once.Do(func() { result = awaitListening(socket, exited, wait) })
		return result
	}, nil
}

// awaitListening waits up to wait for the server started as exited to answer on socket.
func awaitListening(socket string, exited <-chan error, wait time.Duration) error {
	for deadline := time.Now().Add(wait); ; {
		if _, err := StatusOf(socket); err == nil {
			return nil
		}
		select {
		case err := <-exited:
			if _, serr := StatusOf(socket); serr == nil {
				return nil // another caller's server answers
			}
			return fmt.Errorf("the guard server exited at start (%v)", err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the guard server did not answer within %s", wait)
		}
	}
}

// Warm asks the server on socket to warm the workspace root up (hook.Warm) in the background,
// with this process's environment and umask, which the server checks as it checks a guard
// call's; it returns once the server has answered.
func Warm(socket, root string, timeout time.Duration) error {
	c, err := unixsock.Dial(socket, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	req := &hookwire.Request{Op: hookwire.OpWarm, Version: hookwire.Version(), Dir: root, Umask: readUmask(), Env: os.Environ()}
	if _, err := c.Write(hookwire.AppendRequest(nil, req)); err != nil {
		return err
	}
	p, err := hookwire.ReadMessage(c)
	if err != nil {
		return err
	}
	a, err := hookwire.DecodeAnswer(p)
	if err != nil {
		return err
	}
	if a.Kind != hookwire.Result {
		return fmt.Errorf("the guard server did not warm %s up: %s", root, a.Stderr)
	}
	return nil
}
