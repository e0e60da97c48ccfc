package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/mcpserver"
)

// checkpointOut is the part of "checkpoint --json" the watcher tests read.
type checkpointOut struct {
	ID       string `json:"id"`
	Manifest string `json:"manifest"`
	Walk     struct {
		Mode   string `json:"mode"`
		Paths  int    `json:"paths"`
		Reason string `json:"reason"`
	} `json:"walk"`
}

func checkpointJSON(t *testing.T, ws string) checkpointOut {
	t.Helper()
	r := run(t, ws, "", "--json", "checkpoint")
	var out checkpointOut
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.ID == "" {
		t.Fatalf("checkpoint: code %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	return out
}

type watchStatus struct {
	Running bool   `json:"running"`
	PID     int    `json:"pid"`
	Root    string `json:"root"`
	Watched int    `json:"watchedDirs"`
}

func watchStatusJSON(t *testing.T, ws string) watchStatus {
	t.Helper()
	r := run(t, ws, "", "--json", "watch", "status")
	var st watchStatus
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("watch status: code %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	return st
}

// TestWatcherEndToEnd: the first checkpoint starts a watcher and walks (saying why); later ones
// look only at what changed and record what a full walk records; a watcher killed with SIGKILL
// makes the next checkpoint walk and start a new one; "watch stop" stops it; REWIND_WATCH=off
// walks and says so.
func TestWatcherEndToEnd(t *testing.T) {
	needWatcher(t)
	t.Setenv("REWIND_WATCH", "on")
	ws := t.TempDir()
	mkdirs(t, filepath.Join(ws, "src/new"))
	write(t, filepath.Join(ws, "src/main.go"), "package main\n", 0o644)
	write(t, filepath.Join(ws, "README"), "hello\n", 0o644)
	t.Cleanup(func() { run(t, ws, "", "watch", "stop") })

	first := checkpointJSON(t, ws)
	if first.Walk.Mode != "full" || !strings.Contains(first.Walk.Reason, "watcher was started") {
		t.Fatalf("first checkpoint walk = %+v, want a full walk saying a watcher was started", first.Walk)
	}
	st := watchStatusJSON(t, ws)
	if !st.Running || st.PID == 0 || st.Watched != 3 {
		t.Fatalf("watch status = %+v, want running, watching the root, src and src/new", st)
	}

	write(t, filepath.Join(ws, "src/main.go"), "package main // changed\n", 0o644)
	write(t, filepath.Join(ws, "src/new/added.txt"), "new\n", 0o600)
	mkdirs(t, filepath.Join(ws, "made/later"))
	second := checkpointJSON(t, ws)
	if second.Walk.Mode != "changed" || second.Walk.Paths == 0 {
		t.Fatalf("second checkpoint walk = %+v, want the watcher's hint used", second.Walk)
	}
	t.Setenv("REWIND_WATCH", "off")
	full := checkpointJSON(t, ws)
	if full.Walk.Mode != "full" || full.Walk.Reason != "REWIND_WATCH=off" || full.Manifest != second.Manifest {
		t.Fatalf("walk with the watcher off = %+v, manifest %s; the watcher's checkpoint had %s", full.Walk, full.Manifest, second.Manifest)
	}
	t.Setenv("REWIND_WATCH", "on")
	// The last checkpoint was taken without a token: this one walks, and takes one.
	again := checkpointJSON(t, ws)
	if again.Walk.Mode != "full" || !strings.Contains(again.Walk.Reason, "not checkpointed with the watcher") {
		t.Fatalf("after a checkpoint without the watcher: walk = %+v", again.Walk)
	}

	// SIGKILL: the next checkpoint finds no watcher, walks, and starts another.
	if err := killPID(st.PID); err != nil {
		t.Fatal(err)
	}
	waitGone(t, st.PID)
	if err := os.Remove(filepath.Join(ws, "README")); err != nil {
		t.Fatal(err)
	}
	afterKill := checkpointJSON(t, ws)
	if afterKill.Walk.Mode != "full" || !strings.Contains(afterKill.Walk.Reason, "watcher was started") {
		t.Fatalf("after SIGKILL: walk = %+v", afterKill.Walk)
	}
	st2 := watchStatusJSON(t, ws)
	if !st2.Running || st2.PID == st.PID {
		t.Fatalf("after SIGKILL: status %+v, want a new watcher", st2)
	}
	if err := os.Symlink("src", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	next := checkpointJSON(t, ws)
	if next.Walk.Mode != "changed" {
		t.Fatalf("with the new watcher: walk = %+v", next.Walk)
	}
	t.Setenv("REWIND_WATCH", "off")
	if full := checkpointJSON(t, ws); full.Manifest != next.Manifest {
		t.Fatalf("the new watcher's checkpoint %s differs from a full walk's %s", next.Manifest, full.Manifest)
	}

	r := run(t, ws, "", "--json", "watch", "stop")
	var stop struct {
		Stopped bool `json:"stopped"`
		PID     int  `json:"pid"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &stop) != nil || !stop.Stopped || stop.PID != st2.PID {
		t.Fatalf("watch stop: code %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	waitGone(t, st2.PID)
	if st := watchStatusJSON(t, ws); st.Running {
		t.Fatalf("after watch stop: %+v", st)
	}
	if r := run(t, ws, "", "watch", "status"); r.code != 0 || !strings.Contains(r.stdout, "no watcher runs") {
		t.Fatalf("watch status text: %q %q", r.stdout, r.stderr)
	}
	if r := run(t, ws, "", "watch", "stop"); r.code != 0 || !strings.Contains(r.stdout, "no watcher was running") {
		t.Fatalf("watch stop text: %q %q", r.stdout, r.stderr)
	}
	// The README's and docs/watch.md's commands, as written.
	t.Setenv("REWIND_WATCH", "off")
	if r := run(t, ws, "", "checkpoint"); r.code != 0 || !strings.HasPrefix(r.stdout, "checkpoint ") {
		t.Fatalf("REWIND_WATCH=off agent-rewind checkpoint: %q %q", r.stdout, r.stderr)
	}
	if st := watchStatusJSON(t, ws); st.Running {
		t.Fatalf("REWIND_WATCH=off started a watcher: %+v", st)
	}
	t.Setenv("REWIND_WATCH", "on")
	checkpointJSON(t, ws)
	if r := run(t, ws, "", "watch", "status"); r.code != 0 || !strings.Contains(r.stdout, " watched, since ") {
		t.Fatalf("watch status text: %q %q", r.stdout, r.stderr)
	}
	if r := run(t, ws, "", "watch", "stop"); r.code != 0 || !strings.Contains(r.stdout, "stopped") {
		t.Fatalf("watch stop text: %q %q", r.stdout, r.stderr)
	}
}

// TestWatcherExitsWithItsWorkspace: removing the workspace's folder ends its watcher.
func TestWatcherExitsWithItsWorkspace(t *testing.T) {
	needWatcher(t)
	t.Setenv("REWIND_WATCH", "on")
	ws := filepath.Join(t.TempDir(), "ws")
	mkdirs(t, ws)
	write(t, filepath.Join(ws, "f"), "x", 0o644)
	checkpointJSON(t, ws)
	st := watchStatusJSON(t, ws)
	if !st.Running {
		t.Fatal("no watcher after the first checkpoint")
	}
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	waitGone(t, st.PID)
}

// waitGone waits for process pid to end (it is not our child: it was started detached).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return
		}
		// A zombie (state Z) has ended; its parent, the checkpoint that started it, has exited.
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return
		}
	}
	t.Fatalf("process %d still runs", pid)
}

func mkdirs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestWatcherStartedByTheMCPServer: the MCP server's first checkpoint starts the watcher, and
// its later checkpoints record what a full walk records.
func TestWatcherStartedByTheMCPServer(t *testing.T) {
	needWatcher(t)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "app.txt"), "v1\n", 0o644)
	t.Cleanup(func() { run(t, dir, "", "watch", "stop") })
	t.Setenv("REWIND_WATCH", "on")
	cs := startMCP(t, dir, mcpEnv())
	mcpOK[mcpserver.CheckpointResult](t, cs, "checkpoint", map[string]any{"label": "one"})
	st := watchStatusJSON(t, dir)
	if !st.Running {
		t.Fatalf("no watcher after the MCP server's checkpoint: %+v", st)
	}
	write(t, filepath.Join(dir, "app.txt"), "v2\n", 0o644)
	mcpOK[mcpserver.CheckpointResult](t, cs, "checkpoint", map[string]any{"label": "two"})
	write(t, filepath.Join(dir, "new.txt"), "new\n", 0o644)
	viaMCP := mcpOK[mcpserver.CheckpointResult](t, cs, "checkpoint", map[string]any{"label": "three"})
	// The CLI's next checkpoint uses the token the MCP server's checkpoint saved.
	again := checkpointJSON(t, dir)
	if again.Walk.Mode != "changed" {
		t.Fatalf("after the MCP server's checkpoints: walk %+v", again.Walk)
	}
	t.Setenv("REWIND_WATCH", "off")
	full := checkpointJSON(t, dir)
	if full.Manifest != again.Manifest {
		t.Fatalf("watched checkpoint %s (after MCP's %s) differs from a full walk's %s", again.Manifest, viaMCP.ID, full.Manifest)
	}
}

// needWatcher skips where there is no watcher (checkpoints walk there; the other tests cover it).
func needWatcher(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the watcher end to end runs on Linux: on Windows its watch is tested in cli/internal/watch, and its socket cannot run under Wine 8 (no AF_UNIX)")
	}
}

// TestStoppedWatcherReplaced: a watcher stopped with SIGSTOP holds its socket and lock but
// answers nothing. The checkpoint that meets it waits the 2 s ask timeout once, walks, ends it
// and starts a new one, which the next checkpoint uses (issue 26: every checkpoint waited 5 s,
// and it was never replaced).
func TestStoppedWatcherReplaced(t *testing.T) {
	needWatcher(t)
	t.Setenv("REWIND_WATCH", "on")
	ws := t.TempDir()
	write(t, filepath.Join(ws, "f"), "one\n", 0o644)
	t.Cleanup(func() { run(t, ws, "", "watch", "stop") })
	checkpointJSON(t, ws)
	st := watchStatusJSON(t, ws)
	if !st.Running {
		t.Fatalf("no watcher after the first checkpoint: %+v", st)
	}
	stopProcess(t, st.PID)
	t.Cleanup(func() { killPID(st.PID) })
	write(t, filepath.Join(ws, "f"), "two\n", 0o644)
	start := time.Now()
	met := checkpointJSON(t, ws)
	took := time.Since(start)
	if met.Walk.Mode != "full" || !strings.Contains(met.Walk.Reason, "did not answer within 2s") || !strings.Contains(met.Walk.Reason, "it was ended") {
		t.Fatalf("with the watcher stopped: walk = %+v, want a full walk saying it did not answer within 2s and was ended", met.Walk)
	}
	waitGone(t, st.PID)
	st2 := watchStatusJSON(t, ws)
	if !st2.Running || st2.PID == st.PID {
		t.Fatalf("after the stopped watcher: status %+v, want a new watcher", st2)
	}
	write(t, filepath.Join(ws, "g"), "new\n", 0o644)
	next := checkpointJSON(t, ws)
	if next.Walk.Mode != "changed" {
		t.Fatalf("with the new watcher: walk = %+v", next.Walk)
	}
	t.Setenv("REWIND_WATCH", "off")
	if full := checkpointJSON(t, ws); full.Manifest != next.Manifest {
		t.Fatalf("the new watcher's checkpoint %s differs from a full walk's %s", next.Manifest, full.Manifest)
	}
	t.Logf("the checkpoint that met the stopped watcher took %s", took)
}

// TestWatcherKilledWhileAsked: a watcher killed while a checkpoint waits for its answer (the
// connection is accepted, then reset: issue 26's flake of TestWatcherEndToEnd, where the
// killed watcher's socket was still open for an instant) makes that checkpoint walk, and a new
// watcher start.
func TestWatcherKilledWhileAsked(t *testing.T) {
	needWatcher(t)
	t.Setenv("REWIND_WATCH", "on")
	ws := t.TempDir()
	write(t, filepath.Join(ws, "f"), "one\n", 0o644)
	t.Cleanup(func() { run(t, ws, "", "watch", "stop") })
	checkpointJSON(t, ws)
	st := watchStatusJSON(t, ws)
	stopProcess(t, st.PID)
	t.Cleanup(func() { killPID(st.PID) })
	cmd := exec.Command(bin, "--json", "checkpoint")
	cmd.Dir = ws
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // it has connected, and waits for the answer (2 s at most)
	if err := killPID(st.PID); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("checkpoint: %v: %s", err, stderr.String())
	}
	var out checkpointOut
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("checkpoint --json: %v: %s", err, stdout.String())
	}
	if out.Walk.Mode != "full" || !strings.Contains(out.Walk.Reason, "watcher was started") {
		t.Fatalf("with the watcher killed while asked: walk = %+v, want a full walk and a new watcher", out.Walk)
	}
	waitGone(t, st.PID)
	if st2 := watchStatusJSON(t, ws); !st2.Running || st2.PID == st.PID {
		t.Fatalf("after the watcher was killed while asked: status %+v, want a new watcher", st2)
	}
	t.Logf("walk: %+v", out.Walk)
}

// TestRewindVouchedByTheWatcher: a rewind with the watcher running leaves the watcher vouching
// for the checkpoint it restored (its token read before the rewind began), so the checkpoint
// after it looks only at what the rewind wrote, and records what a full walk records; without a
// watcher the next checkpoint walks, as before.
func TestRewindVouchedByTheWatcher(t *testing.T) {
	needWatcher(t)
	t.Setenv("REWIND_WATCH", "on")
	ws := t.TempDir()
	for _, d := range []string{"d0", "d1", "d2"} {
		mkdirs(t, filepath.Join(ws, d))
	}
	for i := range 30 {
		write(t, filepath.Join(ws, fmt.Sprintf("d%d/f%d.txt", i%3, i)), fmt.Sprintf("file %d\n", i), 0o644)
	}
	t.Cleanup(func() { run(t, ws, "", "watch", "stop") })
	first := checkpointJSON(t, ws)
	for i := range 5 {
		write(t, filepath.Join(ws, fmt.Sprintf("d%d/f%d.txt", i%3, i)), "changed\n", 0o644)
	}
	write(t, filepath.Join(ws, "d1/new.txt"), "new\n", 0o644)
	if changed := checkpointJSON(t, ws); changed.Walk.Mode != "changed" {
		t.Fatalf("the checkpoint after the edits: walk %+v, want the watcher's", changed.Walk)
	}
	// The rewind's safety checkpoint takes the watcher's hint too: it holds this late edit,
	// looked at without a walk.
	write(t, filepath.Join(ws, "d2/f2.txt"), "late\n", 0o644)
	r := run(t, ws, "", "--json", "rewind", first.ID)
	var rew struct {
		Safety           string        `json:"safety"`
		SafetyCheckpoint checkpointOut `json:"safetyCheckpoint"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rew) != nil {
		t.Fatalf("rewind: %+v", r)
	}
	if rew.SafetyCheckpoint.Walk.Mode != "changed" || rew.SafetyCheckpoint.Walk.Paths != 1 {
		t.Errorf("the rewind's safety checkpoint: walk %+v, want the watcher's, the one path edited since", rew.SafetyCheckpoint.Walk)
	}
	after := checkpointJSON(t, ws)
	if after.Walk.Mode != "changed" || after.Walk.Paths == 0 || after.Walk.Paths >= 30 {
		t.Errorf("the checkpoint after the rewind: walk %+v, want the watcher's, the paths the rewind wrote (not the 30 files)", after.Walk)
	}
	if after.Manifest != first.Manifest {
		t.Errorf("the checkpoint after the rewind records manifest %s, want the restored %s", after.Manifest, first.Manifest)
	}
	t.Setenv("REWIND_WATCH", "off")
	if walked := checkpointJSON(t, ws); walked.Walk.Mode != "full" || walked.Manifest != first.Manifest {
		t.Errorf("a full walk: %+v, manifest %s, want %s", walked.Walk, walked.Manifest, first.Manifest)
	}
	if r := run(t, ws, "", "rewind", rew.Safety); r.code != 0 {
		t.Fatalf("rewind to the safety checkpoint: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "d2/f2.txt")); string(b) != "late\n" {
		t.Errorf("the safety checkpoint taken with the hint lost the late edit: d2/f2.txt is %q", b)
	}
}
