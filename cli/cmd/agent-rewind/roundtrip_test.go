package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// TestRoundTrip is the first use of agent-rewind with nothing but the binary: checkpoint, list,
// change files from Go (no shell), checkpoint, rewind, check and verify the chain. It is the
// end-to-end test that runs on Windows under Wine too (see TestMain: the test binary is the
// binary there), the guard server included (roundTripServed).
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "first\n")
	c1 := jsonOK[cpOut](t, dir, "checkpoint", "first")
	if c1.ID == "" || c1.Counts.Files != 1 {
		t.Fatalf("first checkpoint: %+v", c1)
	}
	write("a.txt", "second\n")
	write(filepath.Join("sub", "b.txt"), "new\n")
	c2 := jsonOK[cpOut](t, dir, "checkpoint", "second")
	if c2.Parent != c1.ID || c2.Counts.Files != 2 {
		t.Fatalf("second checkpoint: %+v; want 2 files after %s", c2, c1.ID)
	}
	if tl := jsonOK[timelineOut](t, dir, "list"); len(tl.Checkpoints) != 2 || tl.Current != c2.ID {
		t.Fatalf("list: %+v", tl)
	}
	r := jsonOK[restoreOut](t, dir, "rewind", c1.ID)
	if len(r.Kept) != 0 {
		t.Fatalf("rewind left paths alone: %+v", r.Kept)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "first\n" {
		t.Fatalf("a.txt after the rewind: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "sub")); !os.IsNotExist(err) {
		t.Fatalf("sub after the rewind: %v; want it gone", err)
	}
	if tl := jsonOK[timelineOut](t, dir, "list"); tl.Current != c1.ID {
		t.Fatalf("list after the rewind: current %s, want %s", tl.Current, c1.ID)
	}
	roundTripServed(t, dir)
	ok(t, dir, "check")
	if out := ok(t, dir, "chain", "verify").stdout; !strings.Contains(out, "intact") {
		t.Fatalf("chain verify: %s", out)
	}
}

// roundTripServed: the guard call no server answered starts one (as agent-rewind-hook hands
// it over), which then serves a call over its socket (a named pipe on Windows) through
// hookwire.Dial, agent-rewind-hook's own transport, refuses the same effect again, counts
// what it served, and stops when asked.
func roundTripServed(t *testing.T, dir string) {
	t.Helper()
	// An earlier test of this package may have left the shared state's server running (on
	// Linux the e2e tests share one state folder): stop it, so the call below starts one.
	if st := hookServerStatus(t); st.Running {
		run(t, "/", "", "hook-server", "stop")
		if st := hookServerStatus(t); st.Running {
			t.Fatalf("a guard server runs before the round trip's and does not stop: %+v", st)
		}
	}
	first := exec.Command(bin, "--workspace", dir, "guard")
	first.Dir, first.Stdin = dir, strings.NewReader(`{"key": "rt-deploy-1", "payload": 1, "description": "deploy 1"}`)
	first.Env = append(os.Environ(), hookwire.ClientEnv+"="+hookwire.StartServer)
	if r := collect(t, first); r.code != 0 {
		t.Fatalf("the first guard call: %+v", r)
	}
	st := hookServerStatus(t)
	if !st.Running || st.Served != 0 {
		t.Fatalf("the first guard call started no server: %+v", st)
	}
	defer run(t, "/", "", "hook-server", "stop")
	served := func(key string) *hookwire.Answer {
		t.Helper()
		c, err := hookwire.Dial(st.Socket, 50)
		if err != nil {
			t.Fatalf("reach the guard server on %s: %v", st.Socket, err)
		}
		defer c.Close()
		in := `{"key": "` + key + `", "payload": 2, "description": "deploy 2"}`
		req := &hookwire.Request{Op: hookwire.OpGuard, Version: hookwire.Version(), Dir: dir, Umask: umask(),
			StdinRead: true, Stdin: []byte(in), Args: []string{"--workspace", dir, "guard"}, Env: os.Environ()}
		if _, err := c.Write(hookwire.AppendRequest(nil, req)); err != nil {
			t.Fatal(err)
		}
		var a *hookwire.Answer
		for _, want := range []hookwire.Kind{hookwire.Accepted, hookwire.Result} {
			p, err := hookwire.ReadMessage(c)
			if err == nil {
				a, err = hookwire.DecodeAnswer(p)
			}
			if err != nil || a.Kind != want {
				t.Fatalf("the served call %s: %+v, %v; want answer %c", key, a, err, want)
			}
		}
		return a
	}
	if a := served("rt-deploy-2"); a.Code != 0 {
		t.Fatalf("the served call: exit %d, %s", a.Code, a.Stderr)
	}
	if a := served("rt-deploy-2"); a.Code != 2 {
		t.Fatalf("the same effect served again: exit %d, %s; want 2 (refused)", a.Code, a.Stderr)
	}
	if again := hookServerStatus(t); again.PID != st.PID || again.Served != 2 {
		t.Fatalf("after two served calls: %+v; want pid %d, 2 served", again, st.PID)
	}
	if r := run(t, "/", "", "--json", "hook-server", "stop"); r.code != 0 || !strings.Contains(r.stdout, `"stopped": true`) {
		t.Fatalf("hook-server stop: %+v", r)
	}
	if st := hookServerStatus(t); st.Running {
		t.Fatalf("the guard server still runs after stop: %+v", st)
	}
}
