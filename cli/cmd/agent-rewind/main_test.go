package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// asBinaryEnv set to 1 makes this test binary run agent-rewind's main instead of its tests.
const asBinaryEnv = "REWIND_TEST_AS_AGENT_REWIND"

// bin is the agent-rewind binary built once for every end-to-end test in this package, and
// hookBin the agent-rewind-hook binary beside it (as releases place them).
var bin, hookBin string

func TestMain(m *testing.M) {
	if os.Getenv(asBinaryEnv) == "1" {
		main() // this test binary, run as agent-rewind (under Wine: see asBinaryEnv)
	}
	dir, err := os.MkdirTemp("", "agent-rewind-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "agent-rewind")
	// Chain anchors go to a throwaway state directory, never to the user's real one.
	os.Setenv("REWIND_STATE_DIR", filepath.Join(dir, "state"))
	// Checkpoints start no change watcher, except in the tests of the watcher (watch_test.go).
	os.Setenv("REWIND_WATCH", "off")
	// A -race binary sleeps 1s at exit by default (to let other goroutines report); every
	// command of these tests is a process of its own, so that second would dominate the suite.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	hookBin = filepath.Join(dir, "agent-rewind-hook")
	if winpath.UnderWine() {
		// No Go toolchain runs under Wine: this test binary, whose main is agent-rewind's,
		// is the binary. It has no hook client beside it.
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		bin, hookBin = self, ""
		os.Setenv(asBinaryEnv, "1")
	} else {
		build := exec.Command("go", "build", "-race", "-o", dir, ".", "../agent-rewind-hook")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build agent-rewind and agent-rewind-hook:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	// The hook calls started a guard server for this state folder: stop it (one started for a
	// test's own state folder exits when its socket goes with the folder).
	exec.Command(bin, "hook-server", "stop").Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// killPID ends the process pid at once, as a crash would: SIGKILL on Unix, TerminateProcess
// on Windows.
func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// result is one finished run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// run runs the binary in dir with args and optional stdin.
func run(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	return collect(t, cmd)
}

// collect runs cmd and returns what it printed and its exit status (-1 when a signal ended it);
// only a command that cannot be started fails the test.
func collect(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var xe *exec.ExitError
	if err != nil && !errors.As(err, &xe) {
		t.Fatalf("run %q: %v", cmd.Args, err)
	}
	return result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

func TestVersion(t *testing.T) {
	r := run(t, t.TempDir(), "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "agent-rewind ") {
		t.Fatalf("version: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, t.TempDir(), "", "--json", "version")
	var v struct{ Version, Go, OS, Arch string }
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Version == "" || !strings.HasPrefix(v.Go, "go") {
		t.Fatalf("version --json: %q (%v)", r.stdout, err)
	}
}

func TestUsageErrorIsKongs(t *testing.T) {
	r := run(t, t.TempDir(), "", "no-such-command")
	if r.code != 80 || !strings.Contains(r.stderr, "unexpected argument no-such-command") {
		t.Fatalf("unknown command: code %d, stderr %q", r.code, r.stderr)
	}
}

// chainEntry is what the end-to-end tests read back from the store's chain.jsonl.
type chainEntry struct {
	Seq  int64           `json:"seq"`
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

func readChain(t *testing.T, root string) []chainEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(stateDir(t, root), "chain.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []chainEntry
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var e chainEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("chain line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

func kinds(es []chainEntry) map[string]int {
	n := map[string]int{}
	for _, e := range es {
		n[e.Kind]++
	}
	return n
}
