package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/internal/lockfile"
)

// End-to-end tests of the guard server (agent-rewind hook-server) behind agent-rewind-hook:
// served or fallen back, a hook call answers and records the same.

// serverStatus is "hook-server status --json".
type serverStatus struct {
	Running bool   `json:"running"`
	Socket  string `json:"socket"`
	PID     int    `json:"pid"`
	Version string `json:"version"`
	Served  int64  `json:"served"`
}

func hookServerStatus(t *testing.T) serverStatus {
	t.Helper()
	r := run(t, "/", "", "--json", "hook-server", "status")
	var st serverStatus
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("hook-server status: %+v (%v)", r, err)
	}
	return st
}

// waitFor polls cond until it holds. The deadline only ends a test that would otherwise hang:
// nothing here asserts how long anything takes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}

// startHookServer runs "agent-rewind hook-server run" with the test's environment, waits until
// it answers, and stops it at the end, failing the test if the race detector spoke.
func startHookServer(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "hook-server", "run")
	cmd.Dir = "/"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		run(t, "/", "", "hook-server", "stop")
		<-exited
		if strings.Contains(stderr.String(), "DATA RACE") || strings.Contains(stderr.String(), "panic") {
			t.Errorf("the guard server said:\n%s", stderr.String())
		}
	})
	waitFor(t, "the guard server to answer", func() bool { return hookServerStatus(t).PID == cmd.Process.Pid })
	return cmd
}

// stopHookServers stops whatever server the test's calls started, at the end.
func stopHookServers(t *testing.T) {
	t.Cleanup(func() { run(t, "/", "", "hook-server", "stop") })
}

// hookCall runs agent-rewind-hook in dir with extra environment variables.
func hookCall(t *testing.T, dir, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(hookBin, args...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	return collect(t, cmd)
}

// The same hook calls served by a running guard server and with REWIND_HOOK_SERVER=off: the
// same exit codes, output, chain records, ledger, automatic checkpoints and calls.jsonl.
func TestHookServedMatchesFallback(t *testing.T) {
	fixture := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "barrier", "testdata", "hooks", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	gitPush, ls := fixture("claude-code/pretooluse-bash-git-push.json"), fixture("claude-code/pretooluse-bash-ls.json")
	edit := func(id string) string {
		return hookInput(t, "PreToolUse", "Edit", map[string]any{"file_path": "ROOT/main.go", "old_string": "a", "new_string": "b"}, id, map[string]any{"cwd": "ROOT"})
	}
	ws := []string{"--workspace", "ROOT", "guard", "--checkpoint"}
	steps := []hookStep{
		{ws, ls},
		{ws, edit("toolu_edit1")},
		{ws, gitPush}, // admitted
		{ws, strings.ReplaceAll(gitPush, "toolu_01ABC123git", "toolu_again")}, // refused
		{ws, fixture("claude-code/posttooluse-bash.json")},
		{ws, edit("toolu_edit2")},
		{[]string{"--json", "--workspace", "ROOT", "guard"}, fixture("explicit/charge.json")},
		{[]string{"--json", "--workspace", "ROOT", "guard"}, fixture("explicit/charge.json")},
		{[]string{"--workspace", "ROOT", "guard", `{"key": "k2", "payload": 1}`}, ""},
		{ws, edit("toolu_edit3")},
		{[]string{"guard", "--help"}, ""},
		{ws, "not json"},
	}
	for _, watcher := range []bool{false, true} {
		var got [2][]string
		for i, mode := range []string{"off", "served"} {
			t.Run(fmt.Sprintf("watcher=%v/%s", watcher, mode), func(t *testing.T) {
				root, state, wd := t.TempDir(), t.TempDir(), t.TempDir()
				writeFile(t, filepath.Join(root, "main.go"), "package main\n")
				if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
					t.Fatal(err)
				}
				t.Setenv("REWIND_STATE_DIR", state)
				if watcher {
					t.Setenv("REWIND_WATCH", "")
					t.Cleanup(func() { run(t, root, "", "watch", "stop") })
				}
				var srv *exec.Cmd
				if mode == "off" {
					t.Setenv("REWIND_HOOK_SERVER", "off")
				} else {
					srv = startHookServer(t)
				}
				norm := strings.NewReplacer(root, "ROOT", state, "STATE", wd, "WD")
				for _, s := range steps {
					args := make([]string, len(s.args))
					for j, a := range s.args {
						args[j] = strings.ReplaceAll(a, "ROOT", root)
					}
					r := runBin(t, hookBin, wd, strings.ReplaceAll(s.stdin, "ROOT", root), args...)
					got[i] = append(got[i], fmt.Sprintf("%d\x00%s\x00%s", r.code, norm.Replace(blankVolatile(r.stdout)), norm.Replace(blankVolatile(r.stderr))))
				}
				chain := ""
				for _, e := range readChain(t, root) {
					chain += e.Kind + " "
				}
				got[i] = append(got[i], "chain: "+chain)
				calls, _ := os.ReadFile(filepath.Join(stateDir(t, root), "calls.jsonl"))
				got[i] = append(got[i], "calls: "+norm.Replace(blankVolatile(string(calls))))
				effects := run(t, root, "", "--json", "effects")
				got[i] = append(got[i], "effects: "+norm.Replace(blankVolatile(effects.stdout)))
				list := run(t, root, "", "--json", "list")
				got[i] = append(got[i], fmt.Sprintf("checkpoints: %d", strings.Count(list.stdout, `"id"`)))
				if watcher && srv != nil { // the served calls' watcher runs in the server (watch.InProcess)
					if w := watchStatusJSON(t, root); !w.Running || w.PID != srv.Process.Pid {
						t.Errorf("the watcher %+v, want one running in the guard server (pid %d)", w, srv.Process.Pid)
					}
				}
				st := hookServerStatus(t)
				switch {
				case mode == "off" && st.Running:
					t.Errorf("REWIND_HOOK_SERVER=off started a guard server: %+v", st)
				case mode == "served" && st.Served != int64(len(steps)-1): // all but --help, which is not a guard call
					t.Errorf("the server ran the guard for %d calls, want %d: %+v", st.Served, len(steps)-1, st)
				}
			})
		}
		if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") {
			t.Fatalf("watcher=%v: served and fallen back differ:\noff:    %q\nserved: %q", watcher, got[0], got[1])
		}
	}
}

// A fresh state folder and workspace (a repository with a file) for one test.
func serverWorkspace(t *testing.T) (root string) {
	t.Helper()
	root = t.TempDir()
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	writeFile(t, filepath.Join(root, "main.go"), "package main\n")
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// admissions counts the chain's admissions.
func admissions(t *testing.T, root string) int {
	t.Helper()
	if !hasStore(t, root) {
		return 0
	}
	return kinds(readChain(t, root))["effect"]
}

// The first call starts a server (no server answered); a server killed with SIGKILL between
// calls leaves its socket file behind: the next call is answered by the full guard, which
// starts a new server.
func TestHookServerRestartsAfterKill(t *testing.T) {
	root := serverWorkspace(t)
	stopHookServers(t)
	ls := bashHook(t, "PreToolUse", "ls", "toolu_ls")
	if r := hookCall(t, root, ls, nil, "--workspace", root, "guard"); r.code != 0 || r.stdout+r.stderr != "" {
		t.Fatalf("first call: %+v", r)
	}
	waitFor(t, "the server the first call started", func() bool { return hookServerStatus(t).Running })
	first := hookServerStatus(t)
	if err := killPID(first.PID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed server to go", func() bool { return !hookServerStatus(t).Running })
	if _, err := os.Stat(first.Socket); err != nil {
		t.Fatalf("the killed server's socket: %v (the test needs it left behind)", err)
	}
	push := bashHook(t, "PreToolUse", "git push origin main", "toolu_push")
	if r := hookCall(t, root, push, nil, "--workspace", root, "guard"); r.code != 0 {
		t.Fatalf("the call after the kill: %+v", r)
	}
	waitFor(t, "a new server", func() bool { st := hookServerStatus(t); return st.Running && st.PID != first.PID })
	again := bashHook(t, "PreToolUse", "git push origin main", "toolu_push2")
	if r := hookCall(t, root, again, nil, "--workspace", root, "guard"); r.code != 2 || !strings.Contains(r.stderr, "refused") {
		t.Fatalf("the same push again, served by the new server: %+v", r)
	}
	if st := hookServerStatus(t); st.Served != 1 {
		t.Fatalf("the new server served %d calls, want 1", st.Served)
	}
	if n := admissions(t, root); n != 1 {
		t.Fatalf("%d admissions, want 1", n)
	}
}

// A server killed while deciding: the client never falls back (the server may have recorded
// the call); it fails closed with the guard's answer for an error while deciding, and the key
// is admitted at most once.
func TestHookServerKilledMidRequest(t *testing.T) {
	root := serverWorkspace(t)
	srv := startHookServer(t)
	// A store with a ledger, then its lock held: the server's admission waits on it.
	if r := hookCall(t, root, `{"key": "warm-up", "payload": 1}`, nil, "--workspace", root, "guard"); r.code != 0 {
		t.Fatalf("warm-up admission: %+v", r)
	}
	lock, err := os.OpenFile(filepath.Join(stateDir(t, root), "effects", "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := lockfile.Lock(lock, lockfile.Exclusive); err != nil {
		t.Fatal(err)
	}
	push := bashHook(t, "PreToolUse", "git push origin main", "toolu_push")
	done := make(chan result, 1)
	go func() {
		cmd := exec.Command(hookBin, "--workspace", root, "guard")
		cmd.Dir, cmd.Stdin = root, strings.NewReader(push)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		done <- result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
	}()
	waitFor(t, "the server to accept the call", func() bool { return hookServerStatus(t).Served == 2 })
	if err := srv.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 2 || !strings.Contains(r.stderr, "guard server") || !strings.Contains(r.stderr, "refused") {
		t.Fatalf("the call the server died deciding: %+v; want exit 2, refused, naming the guard server", r)
	}
	lockfile.Lock(lock, lockfile.Unlock)
	if n := admissions(t, root); n != 1 {
		t.Fatalf("%d admissions after the interrupted call, want 1 (the warm-up's)", n)
	}
	// The agent retries: no server runs, the full guard decides, once.
	stopHookServers(t)
	if r := hookCall(t, root, push, nil, "--workspace", root, "guard"); r.code != 0 {
		t.Fatalf("the retry: %+v", r)
	}
	if n := admissions(t, root); n != 2 {
		t.Fatalf("%d admissions after the retry, want 2", n)
	}
}

// A client whose environment differs in a variable the guard reads is not served: the server
// answers "fall back", the full guard answers with that environment, and the server stays.
func TestHookServerEnvMismatchFallsBack(t *testing.T) {
	root := serverWorkspace(t)
	startHookServer(t)
	before := hookServerStatus(t)
	edit := hookInput(t, "PreToolUse", "Edit", map[string]any{"file_path": filepath.Join(root, "main.go")}, "toolu_e", nil)
	r := hookCall(t, root, edit, []string{"REWIND_AUTO_CHECKPOINT_LIMIT=1B"}, "--workspace", root, "guard", "--checkpoint")
	if r.code != 0 || !strings.Contains(r.stderr, "no automatic checkpoints in") {
		t.Fatalf("with a 1-byte limit the call must say it takes no checkpoint: %+v", r)
	}
	after := hookServerStatus(t)
	if after.PID != before.PID || after.Served != before.Served {
		t.Fatalf("the server served a client of another environment: %+v then %+v", before, after)
	}
	if r := hookCall(t, root, edit, nil, "--workspace", root, "guard", "--checkpoint"); r.code != 0 || r.stderr != "" {
		t.Fatalf("the same call in the server's environment: %+v", r)
	}
	if st := hookServerStatus(t); st.Served != before.Served+1 {
		t.Fatalf("served %d, want %d", st.Served, before.Served+1)
	}
}

// A client of another build is not served: the server stops, the client's full guard answers
// and starts a server of its own build.
func TestHookServerVersionMismatch(t *testing.T) {
	root := serverWorkspace(t)
	srv := startHookServer(t)
	stopHookServers(t)
	dir := t.TempDir()
	stamped := filepath.Join(dir, "agent-rewind-hook")
	build := exec.Command("go", "build", "-o", stamped, "-ldflags", "-X github.com/agent-rewind/rewind/cli/internal/hookwire.version=v9.9.9", "../agent-rewind-hook")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build a stamped client: %v\n%s", err, out)
	}
	if err := os.Symlink(bin, filepath.Join(dir, "agent-rewind")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(stamped, "--workspace", root, "guard")
	cmd.Dir, cmd.Stdin = root, strings.NewReader(bashHook(t, "PreToolUse", "git push", "toolu_v"))
	if r := collect(t, cmd); r.code != 0 || r.stdout+r.stderr != "" {
		t.Fatalf("the stamped client's call: %+v", r)
	}
	waitFor(t, "the old server to stop", func() bool { return exited(srv.Process.Pid) })
	waitFor(t, "a server of the client's build", func() bool { st := hookServerStatus(t); return st.Running && st.PID != srv.Process.Pid })
	if n := admissions(t, root); n != 1 {
		t.Fatalf("%d admissions, want 1", n)
	}
}

// Parallel hook calls on three workspaces, all served: each answered right, each workspace's
// chain with its own admissions and automatic checkpoints; the server is a -race build and
// reports any data race (startHookServer).
func TestHookServerConcurrentCalls(t *testing.T) {
	serverWorkspace(t)
	var roots []string
	for range 3 {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "main.go"), "package main\n")
		os.Mkdir(filepath.Join(root, ".git"), 0o755)
		roots = append(roots, root)
	}
	startHookServer(t)
	// Each workspace's first automatic checkpoint first: calls racing for a store's first one
	// skip theirs (the store is busy), served or not.
	for i, root := range roots {
		in := hookInput(t, "PreToolUse", "Edit", map[string]any{"file_path": filepath.Join(root, "main.go")}, fmt.Sprintf("toolu_first%d", i), nil)
		if r := hookCall(t, root, in, nil, "--workspace", root, "guard", "--checkpoint"); r.code != 0 || r.stderr != "" {
			t.Fatalf("first checkpoint of %s: %+v", root, r)
		}
	}
	var wg sync.WaitGroup
	results := make([]result, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			root := roots[i%3]
			in := bashHook(t, "PreToolUse", fmt.Sprintf("git push origin b%d", i), fmt.Sprintf("toolu_%d", i))
			if i%2 == 1 {
				in = hookInput(t, "PreToolUse", "Edit", map[string]any{"file_path": filepath.Join(root, "main.go")}, fmt.Sprintf("toolu_%d", i), nil)
			}
			results[i] = hookCall(t, root, in, nil, "--workspace", root, "guard", "--checkpoint")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("call %d: %+v", i, r)
		}
	}
	if st := hookServerStatus(t); st.Served != 23 {
		t.Errorf("served %d calls, want 23", st.Served)
	}
	for j, root := range roots {
		want := 0
		for i := j; i < 20; i += 3 {
			if i%2 == 0 {
				want++
			}
		}
		if n := admissions(t, root); n != want {
			t.Errorf("%s: %d admissions, want %d", root, n, want)
		}
	}
}

// A server whose socket file is removed exits: it no longer owns the name clients find.
func TestHookServerExitsWhenSocketRemoved(t *testing.T) {
	serverWorkspace(t)
	srv := startHookServer(t)
	if err := os.Remove(hookServerStatus(t).Socket); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to exit", func() bool { return exited(srv.Process.Pid) })
}

// exited reports whether the process pid has exited: gone, or a zombie waiting to be reaped
// (startHookServer's Wait reaps it).
func exited(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || strings.Contains(string(b), ") Z ")
}

// A 1 MiB hook input reaches the guard whole, served and fallen back (the fall back hands the
// input it read to agent-rewind through a temporary file).
func TestHookLargeInput(t *testing.T) {
	root := serverWorkspace(t)
	big := hookInput(t, "PreToolUse", "Bash", map[string]any{"command": "ls", "description": strings.Repeat("x", 1<<20)}, "toolu_big", nil)
	small := bashHook(t, "PreToolUse", "ls", "toolu_small")
	for _, env := range [][]string{{"REWIND_HOOK_SERVER=off"}, nil} {
		if env == nil {
			startHookServer(t)
		}
		for _, in := range []string{big, small, big[:len(big)-1]} {
			r := hookCall(t, root, in, env, "--workspace", root, "guard")
			want := 0
			if in != big && in != small {
				want = 2 // cut short: it must be refused, so it was not read in full by luck
			}
			if r.code != want {
				t.Fatalf("%v, %d bytes: %+v, want exit %d", env, len(in), r, want)
			}
		}
	}
	if st := hookServerStatus(t); st.Served != 3 {
		t.Fatalf("served %d, want 3", st.Served)
	}
}

// The commands docs/agents.md shows: status and stop, as text and as JSON.
func TestHookServerStatusAndStop(t *testing.T) {
	serverWorkspace(t)
	if r := run(t, "/", "", "hook-server", "status"); r.code != 0 || !strings.HasPrefix(r.stdout, "no guard server runs on ") {
		t.Fatalf("status with none: %+v", r)
	}
	if r := run(t, "/", "", "hook-server", "stop"); r.code != 0 || r.stdout != "no guard server was running\n" {
		t.Fatalf("stop with none: %+v", r)
	}
	srv := startHookServer(t)
	pid := srv.Process.Pid
	if r := run(t, "/", "", "hook-server", "status"); r.code != 0 || !strings.HasPrefix(r.stdout, fmt.Sprintf("guard server: pid %d, devel, 0 calls served since ", pid)) {
		t.Fatalf("status: %+v", r)
	}
	r := run(t, "/", "", "--json", "hook-server", "stop")
	var out struct {
		Stopped bool `json:"stopped"`
		PID     int  `json:"pid"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 || !out.Stopped || out.PID != pid {
		t.Fatalf("stop --json: %+v (%v)", r, err)
	}
	if st := hookServerStatus(t); st.Running {
		t.Fatalf("still running after stop: %+v", st)
	}
}

// The first call starts the guard server and no watcher; the next, served, starts the watcher
// inside the server, which the calls after it ask without a connection (watch.InProcess).
func TestHookServerRunsTheWatcher(t *testing.T) {
	needWatcher(t)
	root := serverWorkspace(t)
	t.Setenv("REWIND_WATCH", "")
	stopHookServers(t)
	t.Cleanup(func() { run(t, root, "", "watch", "stop") })
	for i := range 3 {
		edit := hookInput(t, "PreToolUse", "Edit", map[string]any{"file_path": filepath.Join(root, "main.go")}, fmt.Sprintf("toolu_w%d", i), nil)
		if r := hookCall(t, root, edit, nil, "--workspace", root, "guard", "--checkpoint"); r.code != 0 || r.stdout+r.stderr != "" {
			t.Fatalf("call %d: %+v", i, r)
		}
		if i == 0 {
			if st := hookServerStatus(t); !st.Running {
				t.Fatalf("the first call started no server: %+v", st)
			}
			if w := watchStatusJSON(t, root); w.Running {
				t.Fatalf("the call that started the server started a watcher too: %+v", w)
			}
		}
	}
	if w, st := watchStatusJSON(t, root), hookServerStatus(t); !w.Running || w.PID != st.PID || st.Served != 2 {
		t.Fatalf("watcher %+v, server %+v: want the watcher in the server, which served 2 calls", w, st)
	}
}

// TestPromptWarmsUpTheSession: a session's first hook call is its prompt (UserPromptSubmit),
// which finds no guard server: it starts one and hands it the warm-up, which takes the first
// checkpoint and starts the watcher in the server, after the prompt was answered. The first
// tool call then reuses that checkpoint, noted under its id, and is served.
func TestPromptWarmsUpTheSession(t *testing.T) {
	needWatcher(t)
	root := serverWorkspace(t)
	t.Setenv("REWIND_WATCH", "")
	stopHookServers(t)
	t.Cleanup(func() { run(t, root, "", "watch", "stop") })
	prompt := hookInput(t, "UserPromptSubmit", "", nil, "", map[string]any{"cwd": root, "prompt": "add a login page"})
	if r := hookCall(t, root, prompt, nil, "--workspace", root, "guard"); r.code != 0 || r.stdout != "" {
		t.Fatalf("the prompt hook: %+v", r)
	}
	var first string
	waitFor(t, "the warm-up's first checkpoint", func() bool {
		if !hasStore(t, root) {
			return false
		}
		tl := listJSON(t, root)
		if len(tl.Checkpoints) > 0 {
			first = tl.Checkpoints[0].ID
			if tl.Checkpoints[0].Label != hook.WarmLabel {
				t.Fatalf("the first checkpoint: %+v, want the label %q", tl.Checkpoints[0], hook.WarmLabel)
			}
		}
		return first != ""
	})
	waitFor(t, "the watcher in the server", func() bool { w := watchStatusJSON(t, root); return w.Running && w.PID == hookServerStatus(t).PID })
	edit := hookInput(t, "PreToolUse", "Edit", map[string]any{"file_path": filepath.Join(root, "main.go")}, "toolu_first", map[string]any{"cwd": root})
	if r := hookCall(t, root, edit, nil, "--workspace", root, "guard", "--checkpoint"); r.code != 0 || r.stdout+r.stderr != "" {
		t.Fatalf("the first tool call: %+v", r)
	}
	tl := listJSON(t, root)
	if len(tl.Checkpoints) != 1 || len(tl.Sessions) != 1 || len(tl.Sessions[0].Calls) != 1 {
		t.Fatalf("after the first tool call: %+v, want the warm-up's checkpoint alone, and the call", tl)
	}
	if c := tl.Sessions[0].Calls[0]; c.ID != "toolu_first" || c.Checkpoint != first || !c.Reused {
		t.Errorf("the first tool call: %+v, want it noted against %s, reused", c, first)
	}
	if st := hookServerStatus(t); st.Served != 1 { // the prompt ran in its own process, which started the server
		t.Errorf("the server served %d guard calls, want the tool call alone", st.Served)
	}
}
