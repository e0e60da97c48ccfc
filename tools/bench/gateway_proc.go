package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// gatewayProc is a running "agent-rewind gateway" child, shared by the gateway-overhead and
// nine-call suites.
type gatewayProc struct {
	URL    string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan error
}

// lockedBuffer is a bytes.Buffer safe for the child's writes and our reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startGateway starts "agent-rewind gateway --port P --upstream URL [extra]" in the workspace
// ws on a free loopback port and waits until it accepts connections.
func startGateway(ctx context.Context, agent *Agent, ws, upstream string, extra ...string) (*gatewayProc, error) {
	return startGatewayEnv(ctx, agent, ws, upstream, nil, extra...)
}

// startGatewayEnv is startGateway with env added to the gateway's environment.
func startGatewayEnv(ctx context.Context, agent *Agent, ws, upstream string, env []string, extra ...string) (*gatewayProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"gateway", "--port", strconv.Itoa(port), "--upstream", upstream}, extra...)
	cmd := agent.Command(context.WithoutCancel(ctx), ws, args...)
	cmd.Env = append(cmd.Env, env...)
	g := &gatewayProc{URL: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = g.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { g.done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return g, nil
		}
		select {
		case err := <-g.done:
			return nil, fmt.Errorf("agent-rewind %v exited before listening (%v): %s", args, err, tail(g.stderr.String(), 600))
		case <-ctx.Done():
			g.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("agent-rewind %v did not accept connections on port %d within 20 s: %s", args, port, tail(g.stderr.String(), 600))
		}
	}
}

// stop ends the gateway (SIGTERM, then SIGKILL after 10 s) and returns its peak RSS in bytes.
func (g *gatewayProc) stop() int64 {
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		g.cmd.Process.Kill()
		<-g.done
	}
	return measure.MaxRSS(g.cmd)
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("not a TCP address")
	}
	return addr.Port, nil
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
