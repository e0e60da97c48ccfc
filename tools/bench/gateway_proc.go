package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	stderr *os.File // the gateway's log: a file, so that no goroutine of the bench reads it
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
	// The log goes to a file beside the workspace, not through a pipe: a pipe would make the
	// bench process, the client being measured, wake to copy every access-log line.
	logf, err := os.CreateTemp(filepath.Dir(ws), "gateway-*.log")
	if err != nil {
		return nil, err
	}
	g := &gatewayProc{URL: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, stderr: logf, done: make(chan error, 1)}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() {
		err := cmd.Wait()
		logf.Close()
		g.done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return g, nil
		}
		select {
		case err := <-g.done:
			return nil, fmt.Errorf("agent-rewind %v exited before listening (%v): %s", args, err, g.logTail())
		case <-ctx.Done():
			g.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("agent-rewind %v did not accept connections on port %d within 20 s: %s", args, port, g.logTail())
		}
	}
}

// logTail returns the end of the gateway's log.
func (g *gatewayProc) logTail() string {
	b, _ := os.ReadFile(g.stderr.Name())
	return tail(string(b), 600)
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

// cpuTime returns the CPU time the gateway's threads have used so far, from Linux's
// /proc/PID/task/*/schedstat (nanoseconds, unlike the clock ticks of /proc/PID/stat).
func (g *gatewayProc) cpuTime() (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", g.cmd.Process.Pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // a thread that ended
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, fmt.Errorf("%s/%s/schedstat: %q: no CPU time", dir, t.Name(), b)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// cpuMeter is the gateway's CPU time at a start, to report the CPU time per request of a
// loop; zero where the platform does not tell.
type cpuMeter struct {
	g     *gatewayProc
	start time.Duration
	ok    bool
}

func (g *gatewayProc) cpuMeter() cpuMeter {
	t, err := g.cpuTime()
	return cpuMeter{g: g, start: t, ok: err == nil}
}

// report records the CPU time the gateway used since the meter started, per one of n units.
func (m cpuMeter) report(b *Bench, name string, n int, unit string) {
	if !m.ok || n == 0 {
		return
	}
	t, err := m.g.cpuTime()
	if err != nil {
		return
	}
	b.Value(name, float64(t-m.start)/float64(n)/float64(time.Millisecond), "ms",
		"CPU time of the gateway process (all threads, /proc/PID/task/*/schedstat) per "+unit, nil, NoGoal,
		"load from other processes moves it less than the latencies")
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
