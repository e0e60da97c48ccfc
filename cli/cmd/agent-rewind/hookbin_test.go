package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// End-to-end tests of agent-rewind-hook, the guard alone in a small binary: it must answer
// every hook exactly as "agent-rewind guard" does.

// runBin runs exe in dir with args and stdin.
func runBin(t *testing.T, exe, dir, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
	return collect(t, cmd)
}

// hookStep is one hook call: the arguments ("ROOT" and "STATE" stand for the workspace and its
// state folder) and standard input.
type hookStep struct {
	args  []string
	stdin string
}

// The same hook calls, through agent-rewind and agent-rewind-hook, each binary in a workspace
// and a state folder of its own: the same exit codes, output and chain records.
func TestHookBinaryMatchesGuard(t *testing.T) {
	fixture := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "barrier", "testdata", "hooks", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	ws := []string{"--workspace", "ROOT", "guard"}
	with := func(extra ...string) []string { return append(append([]string(nil), ws...), extra...) }
	gitPush, ls := fixture("claude-code/pretooluse-bash-git-push.json"), fixture("claude-code/pretooluse-bash-ls.json")
	edit := hookInput(t, "PreToolUse", "Edit", map[string]any{"file_path": "ROOT/main.go", "old_string": "a", "new_string": "b"}, "toolu_edit", nil)
	for _, c := range []struct {
		name  string
		git   bool // the workspace is a git repository with a file
		steps []hookStep
	}{
		{"non-effect", false, []hookStep{{ws, ls}, {with("--checkpoint"), fixture("claude-code/posttooluse-bash.json")}, {ws, fixture("cursor/beforeshellexecution-ls.json")}}},
		{"effect admitted then refused", false, []hookStep{{ws, gitPush}, {with(), strings.ReplaceAll(gitPush, "toolu_01ABC123git", "toolu_again")}}},
		{"PostToolUse confirms", false, []hookStep{{ws, gitPush}, {ws, fixture("claude-code/posttooluse-bash.json")}, {ws, fixture("cursor/beforeshellexecution-git-push.json")}, {ws, fixture("cursor/beforeshellexecution-git-push.json")}}},
		{"explicit with --json", false, []hookStep{
			{[]string{"--json", "--workspace", "ROOT", "guard"}, fixture("explicit/charge.json")},
			{[]string{"--workspace=ROOT", "--json", "guard", strings.TrimSpace(fixture("explicit/charge.json"))}, ""},
			{with(`{"key": "k2", "payload": 1}`), ""},
		}},
		{"automatic checkpoint", true, []hookStep{{with("--checkpoint"), edit}, {with("--checkpoint"), ls}, {with("--checkpoint"), gitPush}}},
		{"state folder flag", true, []hookStep{{[]string{"--state-dir", "STATE", "--workspace", "ROOT", "guard", "--checkpoint"}, edit}}},
		{"no workspace", false, []hookStep{
			{[]string{"--workspace", "", "guard"}, ls},
			{[]string{"--workspace=", "guard", "--checkpoint"}, gitPush},
			{[]string{"--workspace", "${CLAUDE_PROJECT_DIR}", "--json", "guard"}, fixture("explicit/charge.json")},
			{[]string{"guard", "--checkpoint"}, edit},
		}},
		{"bad input", false, []hookStep{{ws, ""}, {ws, "not json"}, {with("--json"), `{"key": "k"`}, {ws, `{"hook_event_name": "PostToolUse"}`}, {with("--json"), `{"hook_event_name": "PostToolUse"}`}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got [2][]string
			for i, exe := range []string{bin, hookBin} {
				root, state, wd := t.TempDir(), t.TempDir(), t.TempDir()
				if c.git {
					writeFile(t, filepath.Join(root, "main.go"), "package main\n")
					if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				t.Setenv("REWIND_STATE_DIR", state)
				norm := strings.NewReplacer(root, "ROOT", state, "STATE", wd, "WD")
				for _, s := range c.steps {
					args := make([]string, len(s.args))
					for j, a := range s.args {
						args[j] = strings.NewReplacer("ROOT", root, "STATE", state).Replace(a)
					}
					stdin := strings.ReplaceAll(s.stdin, "ROOT", root)
					r := runBin(t, exe, wd, stdin, args...)
					got[i] = append(got[i], strings.Join([]string{string(rune('0' + r.code)), norm.Replace(blankVolatile(r.stdout)), norm.Replace(blankVolatile(r.stderr))}, "\x00"))
				}
				chain := "no store"
				if hasStore(t, root) {
					chain = ""
					for _, e := range readChain(t, root) {
						chain += e.Kind + " "
					}
				}
				got[i] = append(got[i], "chain: "+chain)
			}
			if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") {
				t.Fatalf("agent-rewind guard and agent-rewind-hook differ:\nagent-rewind:      %q\nagent-rewind-hook: %q", got[0], got[1])
			}
		})
	}
}

// blankVolatile blanks what differs between two runs of the same calls: times and checkpoint
// ids.
func blankVolatile(s string) string {
	s = regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)`).ReplaceAllString(s, "TIME")
	return regexp.MustCompile(`\b[0-9a-f]{12,64}\b`).ReplaceAllString(s, "ID")
}

// Anything but the guard's command line is agent-rewind's: the hook binary says so, exit 2.
func TestHookBinaryRefusesOtherCommands(t *testing.T) {
	for _, args := range [][]string{{}, {"version"}, {"--help"}, {"guard", "--help"}, {"checkpoint"}, {"guard", "{}", "{}"}, {"--", "guard"}, {"--exact-workspace", "guard"}} {
		r := runBin(t, hookBin, t.TempDir(), "", args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "run agent-rewind") || !strings.Contains(r.stderr, "agent-rewind-hook [--workspace DIR]") {
			t.Errorf("agent-rewind-hook %q: %+v", args, r)
		}
	}
}

// agent-rewind-hook starts the change watcher through the agent-rewind beside it (it cannot run
// "watch run" itself): after its automatic checkpoint, agent-rewind watches the workspace.
func TestHookBinaryStartsWatcher(t *testing.T) {
	needWatcher(t)
	t.Setenv("REWIND_WATCH", "on")
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n")
	t.Cleanup(func() { run(t, ws, "", "watch", "stop") })
	// Two calls: a call that starts the guard server leaves the watcher to the server's calls.
	for _, id := range []string{"toolu_w1", "toolu_w2"} {
		edit := hookInput(t, "PreToolUse", "Edit", map[string]any{"file_path": filepath.Join(ws, "main.go")}, id, nil)
		if r := runBin(t, hookBin, t.TempDir(), edit, "--workspace", ws, "guard", "--checkpoint"); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("agent-rewind-hook guard --checkpoint: %+v", r)
		}
	}
	// The hook starts the watcher and does not wait for it; this bound is for a watcher that never
	// comes, not a timing assertion.
	deadline := time.Now().Add(30 * time.Second)
	st := watchStatusJSON(t, ws)
	for !st.Running && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		st = watchStatusJSON(t, ws)
	}
	if !st.Running {
		t.Fatalf("no watcher runs after agent-rewind-hook's automatic checkpoint: %+v", st)
	}
	if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(st.PID), "exe")); err != nil || exe != bin {
		t.Fatalf("the watcher (pid %d) runs %q (%v), want %s", st.PID, exe, err, bin)
	}
}

// A guard call looks the workspace's store up once: the identity file and store.json are each
// opened once, whichever binary runs it (the workspace choice, the worktree check and the rules
// lookup used to read them three times).
func TestGuardLooksUpTheStoreOnce(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		missing(t, "strace (apt-get install strace)")
	}
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n")
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	ok(t, ws, "checkpoint", "one")
	// The traced process itself must run the guard: agent-rewind-hook then execs agent-rewind's
	// (a served call runs the same hook.Guard in the guard server, which strace does not see).
	t.Setenv("REWIND_HOOK_SERVER", "off")
	input := strings.ReplaceAll(bashHook(t, "PreToolUse", "ls -la", "toolu_s1"), `"/tmp/e2e"`, strconv.Quote(ws))
	for _, exe := range []string{bin, hookBin} {
		for _, args := range [][]string{{"--workspace", ws, "guard"}, {"guard"}} {
			trace := filepath.Join(t.TempDir(), "trace")
			cmd := exec.Command("strace", append([]string{"-f", "-qq", "-o", trace, "-e", "trace=open,openat,openat2,statx", exe}, args...)...)
			cmd.Dir, cmd.Stdin = t.TempDir(), strings.NewReader(input)
			if out, err := cmd.CombinedOutput(); err != nil {
				if strings.Contains(string(out), "ptrace") {
					missing(t, "permission to trace (ptrace): "+string(out))
				}
				t.Fatalf("strace %s %q: %v\n%s", exe, args, err, out)
			}
			b, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			ids := regexp.MustCompile(`"[^"]*/identities/[^"]*"`).FindAllString(string(b), -1)
			recs := regexp.MustCompile(`"[^"]*/store\.json"`).FindAllString(string(b), -1)
			if len(ids) != 1 || len(recs) != 1 {
				t.Errorf("%s %q opened the identity file %d times and store.json %d times, want once each:\n%s\n%s", filepath.Base(exe), args, len(ids), len(recs), ids, recs)
			}
			// The workspace folder's identity is read once too: the hook input names the root
			// itself, which choosing already resolved.
			if n := strings.Count(string(b), "statx(AT_FDCWD, "+strconv.Quote(ws)); n != 1 {
				t.Errorf("%s %q read the identity of %s %d times, want once", filepath.Base(exe), args, ws, n)
			}
		}
	}
}
