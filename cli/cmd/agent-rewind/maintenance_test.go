package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// End-to-end tests of the automatic maintenance (docs/agents.md, "Retention"): hooks hand it
// on after an automatic checkpoint when it is due, to a process of its own (gc --auto) or to
// the guard server, which runs it after its answer.

// packCount counts the pack indexes in the store of project.
func packCount(t *testing.T, project string) int {
	t.Helper()
	names, err := os.ReadDir(filepath.Join(stateDir(t, project), "packs"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range names {
		if strings.HasSuffix(e.Name(), ".idx") && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// manyCalls makes n tool calls in project, each after writing a file of its own (so each
// automatic checkpoint stores something: a pack), through call; every call must pass quietly:
// no note that the store was busy. It returns the calls' ids.
func manyCalls(t *testing.T, project string, n int, call func(in string) result) []string {
	t.Helper()
	var ids []string
	for i := range n {
		writeFile(t, filepath.Join(project, fmt.Sprintf("gen/f%03d.txt", i)), fmt.Sprintf("file %d\n", i))
		id := fmt.Sprintf("toolu_M%03d", i)
		if r := call(bashHook(t, "PreToolUse", "make", id)); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("call %d: %+v", i, r)
		}
		ids = append(ids, id)
	}
	return ids
}

// restoresEveryCall rewinds project to before each call and checks the files the call found.
func restoresEveryCall(t *testing.T, project string, ids []string) {
	t.Helper()
	for i, id := range ids {
		if r := run(t, project, "", "--workspace", project, "rewind", id); r.code != 0 {
			t.Fatalf("rewind %s: %+v", id, r)
		}
		if got, want := readFile(t, filepath.Join(project, fmt.Sprintf("gen/f%03d.txt", i))), fmt.Sprintf("file %d\n", i); got != want {
			t.Fatalf("before %s: f%03d.txt holds %q, want %q", id, i, got, want)
		}
		if got := readFile(t, filepath.Join(project, fmt.Sprintf("gen/f%03d.txt", i+1))); got != "<absent>" {
			t.Fatalf("before %s: f%03d.txt holds %q, want it absent", id, i+1, got)
		}
	}
}

// Without a guard server, the hook starts "agent-rewind gc --auto" once more than 32 small
// packs pile up; it merges them, and every call's checkpoint still restores.
func TestHooksStartMaintenance(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, "main.go"), "package main\n")
	ids := manyCalls(t, project, 40, func(in string) result {
		return preToolUse(t, project, in, "REWIND_HOOK_SERVER=off")
	})
	// One pack a call: 40 without maintenance. It starts once more than 32 pile up and merges
	// what it finds, so the calls after it add theirs again (fewer than 32 either way).
	waitFor(t, "the small packs merged", func() bool { return packCount(t, project) < 32 })
	// The retention was applied too (the defaults keep all of today's).
	waitFor(t, "the retention applied", func() bool {
		_, err := os.Stat(filepath.Join(stateDir(t, project), "maintenance"))
		return err == nil
	})
	if tl := listJSON(t, project); len(tl.Sessions) != 1 || len(tl.Sessions[0].Calls) != 40 {
		t.Fatalf("after maintenance: %d sessions", len(tl.Sessions))
	}
	restoresEveryCall(t, project, ids)
	verifyChain(t, project)
}

// A guard server runs the maintenance itself, after its answer.
func TestHookServerMaintainsInTheBackground(t *testing.T) {
	root := serverWorkspace(t)
	server := startHookServer(t)
	ids := manyCalls(t, root, 40, func(in string) result {
		return hookCall(t, root, in, nil, "--workspace", root, "guard", "--checkpoint")
	})
	// One pack a call: 40 without maintenance. It starts once more than 32 pile up and merges
	// what it finds, so the calls after it add theirs again (fewer than 32 either way).
	waitFor(t, "the small packs merged", func() bool { return packCount(t, root) < 32 })
	if st := hookServerStatus(t); st.PID != server.Process.Pid || st.Served != 40 {
		t.Fatalf("the guard server: %+v", st)
	}
	restoresEveryCall(t, root, ids)
	verifyChain(t, root)
}

// gc --auto applies the retention of automatic checkpoints, removing exactly what gc --dry-run
// lists and never a manual checkpoint; REWIND_AUTO_RETENTION=off turns it off.
func TestGCAutoRetention(t *testing.T) {
	project := t.TempDir()
	main := filepath.Join(project, "main.go")
	writeFile(t, main, "v0")
	if r := run(t, project, "", "--workspace", project, "checkpoint", "mine"); r.code != 0 {
		t.Fatalf("checkpoint: %+v", r)
	}
	for i := range 5 {
		writeFile(t, main, fmt.Sprint("v", i+1))
		// The switch is off for the hooks: no maintenance is due, none starts.
		if r := preToolUse(t, project, bashHook(t, "PreToolUse", "make", fmt.Sprint("toolu_R", i)), "REWIND_HOOK_SERVER=off", "REWIND_AUTO_RETENTION=off"); r.code != 0 || r.stderr != "" {
			t.Fatalf("hook: %+v", r)
		}
	}
	type maintainOut struct {
		Due struct {
			SmallPacks int
			Retention  bool
		}
		Retention *struct{ Removed []string }
		Skipped   string
	}
	policy := []string{"--auto-keep-last", "2", "--auto-keep-within", "0"}
	gcAuto := func(env ...string) maintainOut {
		t.Helper()
		r := runIn(t, project, append(os.Environ(), env...), "", append([]string{"--workspace", project, "--json", "gc", "--auto"}, policy...)...)
		var out maintainOut
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
			t.Fatalf("gc --auto: %+v", r)
		}
		return out
	}
	if out := gcAuto("REWIND_AUTO_RETENTION=off"); out.Due.Retention || out.Retention != nil {
		t.Fatalf("gc --auto with REWIND_AUTO_RETENTION=off: %+v", out)
	}
	if tl := listJSON(t, project); len(tl.Checkpoints) != 6 {
		t.Fatalf("%d checkpoints after gc --auto with the retention off, want 6", len(tl.Checkpoints))
	}
	r := run(t, project, "", append([]string{"--workspace", project, "--json", "gc", "--dry-run"}, policy...)...)
	var dry struct{ Removed []string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &dry) != nil || len(dry.Removed) != 3 {
		t.Fatalf("gc --dry-run: %+v", r)
	}
	out := gcAuto() // never applied: due now
	if !out.Due.Retention || out.Retention == nil || !slices.Equal(out.Retention.Removed, dry.Removed) {
		t.Fatalf("gc --auto removed %+v, gc --dry-run listed %v", out.Retention, dry.Removed)
	}
	tl := listJSON(t, project)
	if len(tl.Checkpoints) != 3 || tl.Checkpoints[0].Label != "mine" {
		t.Fatalf("after gc --auto: %+v", tl.Checkpoints)
	}
	if out := gcAuto(); out.Due.Retention || out.Retention != nil {
		t.Fatalf("gc --auto again the same day: %+v", out)
	}
	// As docs/checkpoints.md shows them.
	if r := run(t, project, "", "gc", "--auto"); r.code != 0 || !strings.Contains(r.stdout, "nothing due") {
		t.Fatalf("gc --auto, nothing due: %+v", r)
	}
	r = run(t, project, "", "--json", "gc", "--auto")
	var shape map[string]json.RawMessage
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &shape) != nil || len(shape) != 5 ||
		string(shape["retention"]) != "null" || string(shape["packsMerged"]) != "0" || shape["batches"] == nil || shape["maxHoldMs"] == nil || shape["due"] == nil {
		t.Fatalf("--json gc --auto, nothing due: %+v", r)
	}
	r = runIn(t, project, append(os.Environ(), "REWIND_AUTO_RETENTION=maybe"), "", "--workspace", project, "gc", "--auto")
	if r.code != 1 || !strings.Contains(r.stderr, `REWIND_AUTO_RETENTION="maybe"`) {
		t.Fatalf("gc --auto with a bad switch: %+v", r)
	}
	verifyChain(t, project)
	if kinds(readChain(t, project))["gc"] != 1 {
		t.Fatal("no gc entry on the chain")
	}
}
