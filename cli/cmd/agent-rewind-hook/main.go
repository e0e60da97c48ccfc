// Command agent-rewind-hook is agent-rewind's guard for agents' hooks: the same command line
// (hook.Usage), input, output, exit codes and chain records as "agent-rewind guard", from a
// process that does as little as it can, since an agent starts one before and after every tool
// call. It is a thin client: it reads its standard input and hands the call, with its
// arguments, working directory, environment and umask, to the per-user guard server
// ("agent-rewind hook-server", cli/internal/hookserver), which runs the guard in a process that
// is already warm, and relays the answer.
//
// When no server answers, or the server says to fall back (another build, another
// environment), or REWIND_HOOK_SERVER=off, it becomes "agent-rewind <the same arguments>"
// (exec, with the standard input it read given back; on Windows, which has no exec, a child
// it waits for and whose exit code it exits with), which runs the whole guard and, when no
// server answered, starts one for the next calls. Once a server has accepted a call it never
// falls back: the server may have recorded it, and a second decision would refuse the effect as
// a duplicate; a server that stops before answering fails the call closed.
//
// The request carries the caller's whole environment, so it goes only to a server it can trust:
// the socket's folder and every folder above it can be changed by no one but this user and
// root, and the process listening runs as this user (cli/internal/trust). Otherwise the call
// is refused (exit 2) with what is wrong and what to do, and nothing is sent.
//
// It links the standard library's smallest parts, cli/internal/hookwire and cli/internal/trust
// only (deps_test.go).
package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/statebase"
	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// answerTimeout bounds, in seconds, each wait for the server: generous (a checkpoint without
// the watcher walks the tree), and below the minute agents give a hook.
const answerTimeout = 50

func main() {
	args := os.Args[1:]
	if os.Getenv(hookwire.ServerEnv) == "off" {
		handOver(args, nil, false, hookwire.NoStart)
	}
	readStdin := !inputArg(args)
	var in []byte
	if readStdin {
		if stdinIsTerminal() {
			handOver(args, nil, false, hookwire.NoStart) // a terminal: the guard says what it wants
		}
		var err error
		if in, err = readAll(stdin(), hookwire.MaxField); err != nil {
			os.Stderr.WriteString("agent-rewind: guard: read standard input: " + err.Error() + "\n")
			os.Exit(1)
		}
	}
	sock, err := hookwire.Socket(os.Getenv)
	if err != nil {
		handOver(args, in, readStdin, hookwire.NoStart)
	}
	// The request holds the caller's environment: it goes only to a server in a folder no other
	// user can change, that runs as this user (hookwire.Dial checks the peer).
	dir := filepath.Dir(sock)
	if err := trust.Folder(filepath.Dir(dir)); err != nil { // the state folder, as the guard judges it
		failClosed(untrusted(err))
	}
	if err := trust.Within(filepath.Dir(dir), dir); err != nil {
		failClosed(untrusted(err))
	}
	// The request is whole before connecting: the server wakes when the connection comes, and
	// finds all of it there, instead of waking a second time for it.
	wd, _ := os.Getwd()
	req := hookwire.AppendRequest(nil, &hookwire.Request{Op: hookwire.OpGuard, Version: hookwire.Version(), Dir: wd,
		Umask: umask(), StdinRead: readStdin, Stdin: in, Args: args, Env: os.Environ()})
	conn, err := hookwire.Dial(sock, answerTimeout)
	if errors.Is(err, trust.ErrUntrusted) {
		failClosed(untrusted(err))
	} else if err != nil {
		handOver(args, in, readStdin, hookwire.StartServer)
	}
	if _, err := conn.Write(req); err != nil {
		conn.Close() // the server has not read the whole request: it did nothing
		handOver(args, in, readStdin, hookwire.StartServer)
	}
	a, err := readAnswer(conn)
	if err != nil {
		conn.Close()
		if err == syscall.EAGAIN { // timed out: the server may act yet
			failClosed("the guard server (agent-rewind hook-server) did not answer within 50s; see agent-rewind hook-server status, or set REWIND_HOOK_SERVER=off")
		}
		handOver(args, in, readStdin, hookwire.StartServer) // closed before accepting: it did nothing
	}
	switch a.Kind {
	case hookwire.FallBack:
		conn.Close()
		mode := hookwire.NoStart
		if a.Code == hookwire.Restart {
			mode = hookwire.StartServer
		}
		handOver(args, in, readStdin, mode)
	case hookwire.Accepted:
		if r, err := readAnswer(conn); err == nil && r.Kind == hookwire.Result {
			a = r
		} // else the server stopped while deciding: a's answer fails the call closed
	}
	os.Stdout.Write(a.Stdout)
	os.Stderr.Write(a.Stderr)
	os.Exit(a.Code)
}

// readAnswer reads one answer.
func readAnswer(c hookwire.Conn) (*hookwire.Answer, error) {
	p, err := hookwire.ReadMessage(c)
	if err != nil {
		return nil, err
	}
	return hookwire.DecodeAnswer(p)
}

// inputArg reports whether the guard's input is an argument, so that it reads no standard
// input, as hook.ParseArgs would take args. Should it guess wrong, the server falls back.
func inputArg(args []string) bool {
	seenGuard := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--workspace" || a == "--state-dir":
			i++
		case a == "guard" && !seenGuard:
			seenGuard = true
		case seenGuard && a != "" && !strings.HasPrefix(a, "-"):
			return true
		}
	}
	return false
}

// readAll reads r to its end, or to limit bytes.
func readAll(r io.Reader, limit int) ([]byte, error) {
	b := make([]byte, 0, 16<<10)
	for len(b) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// untrusted says why the state folder, the guard server's folder or the server is refused, and
// the way out, as the full guard says it.
func untrusted(err error) string {
	return "agent-rewind's state folder is not safe to use: " + err.Error() + " (or choose a state folder of your own with --state-dir or " + statebase.Env + ")"
}

// failClosed refuses the call when no guard could decide it: exit 2, the reason on stderr.
func failClosed(why string) {
	os.Stderr.WriteString("agent-rewind-hook refused this call: no guard could decide it, so it would run unrecorded: " + why + "\n")
	os.Exit(2)
}

// agentRewind finds agent-rewind: beside this binary (release archives, the npm package and
// the plugin put them together), under the name that matches this one's (a release's
// agent-rewind-hook-v1.2.3-linux-amd64 is beside agent-rewind-v1.2.3-linux-amd64) or as
// agent-rewind (agent-rewind.exe on Windows), else on PATH.
func agentRewind() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, base := filepath.Split(exe)
	if suffix, ok := strings.CutPrefix(base, "agent-rewind-hook"); ok && suffix != "" && suffix != exeSuffix {
		if p := filepath.Join(dir, "agent-rewind"+suffix); executable(p) {
			return p, nil
		}
	}
	if p := filepath.Join(dir, "agent-rewind"+exeSuffix); executable(p) {
		return p, nil
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if p := filepath.Join(d, "agent-rewind"+exeSuffix); filepath.IsAbs(p) && executable(p) {
			return p, nil
		}
	}
	return "", errors.New("agent-rewind is neither beside " + exe + " nor on PATH: install agent-rewind with agent-rewind-hook")
}
