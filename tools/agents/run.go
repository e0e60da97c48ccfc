package agents

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// Result is one finished run of a program.
type Result struct {
	Args     []string
	Stdout   string
	Stderr   string
	Code     int // the exit status; -1 when a signal ended it
	Wall     time.Duration
	TimedOut bool
}

// Run runs a program (a client, headless) in dir with the Env's environment and extra
// variables ("NAME=value"), with an empty stdin, in a process group of its own that is killed
// whole when timeout passes and again when the program exits: clients leave MCP servers and
// helpers behind. Under TraceNetwork it runs under strace. Only a program that cannot be
// started fails the test.
func (e *Env) Run(dir string, timeout time.Duration, extra []string, name string, args ...string) Result {
	e.T.Helper()
	return e.run(true, dir, timeout, extra, name, args...)
}

func (e *Env) run(traceable bool, dir string, timeout time.Duration, extra []string, name string, args ...string) Result {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if traceable {
		prog, argv := e.traced(name, args)
		cmd = exec.CommandContext(ctx, prog, argv...)
	}
	cmd.Dir = dir
	cmd.Env = append(e.Environ(), extra...)
	cmd.Stdin = strings.NewReader("")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A helper that outlives the client may hold its stdout open: stop waiting for it.
	cmd.WaitDelay = 5 * time.Second
	// Our own buffers: measure.Child keeps none when the wait ends in an error of its own.
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	r, err := measure.Child(cmd)
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the client left in its group
	}
	if cmd.ProcessState == nil {
		e.T.Fatalf("run %s: %v", name, err)
	}
	res := Result{Args: cmd.Args, Stdout: out.String(), Stderr: errb.String(), Code: cmd.ProcessState.ExitCode(), Wall: r.Wall, TimedOut: ctx.Err() != nil}
	if res.Wall == 0 {
		res.Wall = time.Since(start)
	}
	return res
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
