package snapshot

import (
	"bytes"
	"crypto/sha256"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// keptLive returns the paths a restore left alone because they were in use (Kept.Live).
func keptLive(res *RestoreResult) map[string]string {
	m := map[string]string{}
	for _, k := range res.Kept {
		if k.Live {
			m[k.Path] = k.Reason
		}
	}
	return m
}

// listenUnix creates a Unix socket at root/rel (bound from inside root: socket paths are short).
func listenUnix(t *testing.T, root, rel string) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", rel)
	os.Chdir(wd)
	if err != nil && winpath.UnderWine() {
		t.Skipf("Wine 8 has no AF_UNIX sockets: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	t.Cleanup(func() { l.Close() })
}

// TestRewindNeverLosesGrowingFile is the repro: a file that a process keeps appending to
// (a dev server's log) while a rewind runs. Its new content was never checkpointed, so the
// rewind must not replace it: every line written before, during and after the rewind is still
// there, and the rewind reports the file as kept because in use. Once the writer stops, the same
// rewind restores the target's version.
func TestRewindNeverLosesGrowingFile(t *testing.T) {
	root := t.TempDir()
	name := filepath.Join(root, "grow.bin")
	first := bytes.Repeat([]byte("0123456789abcdef"), 4<<16) // 4 MiB: reading it takes a while
	os.WriteFile(name, first, 0o644)
	put(t, root, "s.txt", "stable\n", 0o644)
	s := mustOpen(t, root, Options{})
	c1, err := s.Checkpoint(ctx, "C1")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "s.txt", "edited\n", 0o644)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")                   // new data, never checkpointed
	logName := filepath.Join(root, "new.log") // a log the target does not have
	lf, err := os.OpenFile(logName, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var lines atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer f.Close()
		defer lf.Close()
		for !stop.Load() {
			if _, err := f.WriteString("line\n"); err != nil {
				t.Error(err)
				return
			}
			lf.WriteString("line\n")
			lines.Add(1)
			time.Sleep(200 * time.Microsecond)
		}
	}()
	time.Sleep(50 * time.Millisecond)
	res, err := s.Rewind(ctx, c1.ID, RestoreOptions{})
	time.Sleep(50 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(bytes.Clone(first), "more\n"...), bytes.Repeat([]byte("line\n"), int(lines.Load()))...)
	if got, _ := os.ReadFile(name); !bytes.Equal(got, want) {
		t.Fatalf("the rewind changed the file being written: %d bytes, want %d (the original, \"more\", %d lines)", len(got), len(want), lines.Load())
	}
	if got, _ := os.ReadFile(logName); !bytes.Equal(got, bytes.Repeat([]byte("line\n"), int(lines.Load()))) {
		t.Fatalf("the rewind changed or deleted the log being written: %d bytes, want %d lines", len(got), lines.Load())
	}
	for _, p := range []string{"grow.bin", "new.log"} {
		if _, ok := keptLive(res)[p]; !ok {
			t.Fatalf("%s not reported as kept in use: %+v", p, res.Kept)
		}
	}
	for _, c := range res.Changes {
		if c.Path == "grow.bin" {
			t.Fatalf("grow.bin listed as changed: %+v", c)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(root, "s.txt")); string(got) != "stable\n" {
		t.Fatalf("the rest of the rewind was not done: s.txt is %q", got)
	}
	// Quiet now: the same rewind restores the target's version, after checkpointing this one.
	res2, err := s.Rewind(ctx, c1.ID, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(name); !bytes.Equal(got, first) || len(keptLive(res2)) != 0 {
		t.Fatalf("rewind once quiet: %d bytes, kept %+v", len(got), res2.Kept)
	}
	if _, err := os.Lstat(logName); !os.IsNotExist(err) {
		t.Fatalf("rewind once quiet left the log the target does not have: %v", err)
	}
	entries, _ := s.Entries(res2.Safety)
	for _, e := range entries {
		if e.Path == "grow.bin" && (e.Type != TypeFile || e.Size != int64(len(want))) {
			t.Fatalf("the second rewind's safety checkpoint lacks the grown file: %+v", e)
		}
	}
}

// TestSkippedPathsNeverTouched: a socket or FIFO in the live workspace is never removed or
// replaced by a rewind, whatever the target holds at that path (a file, a folder with files), and
// a folder holding one is never removed nor replaced by a file; the rest of the rewind is done.
func TestSkippedPathsNeverTouched(t *testing.T) {
	root := t.TempDir()
	put(t, root, "sock", "a file in the target", 0o644)
	put(t, root, "pipe", "a file in the target", 0o644)
	put(t, root, "srv/a.txt", "a folder in the target", 0o644)
	put(t, root, "run", "a file in the target, a folder with a socket now", 0o644)
	put(t, root, "other.txt", "v1", 0o644)
	s := mustOpen(t, root, Options{})
	c1, err := s.Checkpoint(ctx, "C1")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"sock", "pipe", "run"} {
		os.Remove(filepath.Join(root, p))
	}
	os.RemoveAll(filepath.Join(root, "srv"))
	listenUnix(t, root, "sock")
	listenUnix(t, root, "srv")
	mkfifo(t, filepath.Join(root, "pipe"), 0o644)
	put(t, root, "run/x.txt", "captured", 0o644)
	listenUnix(t, root, "run/app.sock")
	put(t, root, "other.txt", "v2", 0o644)
	res, err := s.Rewind(ctx, c1.ID, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{"sock": os.ModeSocket, "srv": os.ModeSocket, "pipe": os.ModeNamedPipe, "run": os.ModeDir, "run/app.sock": os.ModeSocket} {
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil || fi.Mode().Type() != want {
			t.Errorf("%s was touched by the rewind: %v %v", p, fi, err)
		}
	}
	live := keptLive(res)
	for _, p := range []string{"sock", "pipe", "srv", "srv/a.txt"} {
		if _, ok := live[p]; !ok {
			t.Errorf("%s not reported kept in use: %+v", p, res.Kept)
		}
	}
	found := false
	for _, k := range res.Kept {
		found = found || (k.Path == "run" && strings.Contains(k.Reason, "target's file there was not restored"))
	}
	if !found {
		t.Errorf("run not reported kept: %+v", res.Kept)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "other.txt")); string(got) != "v1" {
		t.Errorf("the rest of the rewind was not done: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(root, "run/x.txt")); !os.IsNotExist(err) {
		t.Errorf("run/x.txt (captured by the safety checkpoint, not in the target) not removed: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(s.StateDir(), "journal")); !os.IsNotExist(err) {
		t.Fatalf("journal left: %v", err)
	}
	if _, err := s.Checkpoint(ctx, "after"); err != nil {
		t.Fatal(err)
	}
}

// TestRewindNeverLosesWritesDuringIt: paths written after the safety checkpoint, while the
// restore runs (a file changed, a file created where the target has one, a folder that gains a
// file, a file changed that the target lacks), are left as they are and reported; nothing of
// them is lost, and the rest of the rewind is done.
func TestRewindNeverLosesWritesDuringIt(t *testing.T) {
	root := t.TempDir()
	put(t, root, "m.txt", "target", 0o644)
	put(t, root, "added.txt", "target", 0o644)
	put(t, root, "t", "target: a file", 0o644)
	put(t, root, "mode.txt", "same", 0o444) // a write bit, which Windows keeps too
	put(t, root, "other.txt", "target", 0o644)
	s := mustOpen(t, root, Options{})
	c1, err := s.Checkpoint(ctx, "C1")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "m.txt", "live", 0o644)
	os.Remove(filepath.Join(root, "added.txt"))
	os.Remove(filepath.Join(root, "t"))
	put(t, root, "t/in.txt", "live", 0o644)
	put(t, root, "gone/a.txt", "live", 0o644)
	put(t, root, "del.txt", "live", 0o644)
	os.Chmod(filepath.Join(root, "mode.txt"), 0o644)
	put(t, root, "other.txt", "live", 0o644)
	during := map[string]string{
		"m.txt":        "written during the rewind",
		"added.txt":    "created during the rewind",
		"t/new.txt":    "created during the rewind",
		"gone/new.txt": "created during the rewind",
		"del.txt":      "written during the rewind",
		"mode.txt":     "written during the rewind",
	}
	s.beforeApply = func() {
		for p, c := range during {
			if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	res, err := s.Rewind(ctx, c1.ID, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range during {
		if got, err := os.ReadFile(filepath.Join(root, p)); string(got) != c {
			t.Errorf("%s written during the rewind was lost: %q %v", p, got, err)
		}
	}
	live := keptLive(res)
	for _, p := range []string{"m.txt", "added.txt", "del.txt", "mode.txt"} {
		if _, ok := live[p]; !ok {
			t.Errorf("%s not reported kept in use: %+v", p, res.Kept)
		}
	}
	reported := map[string]bool{}
	for _, k := range res.Kept {
		reported[k.Path] = true
	}
	for _, p := range []string{"t", "gone"} {
		if !reported[p] {
			t.Errorf("folder %s not reported kept: %+v", p, res.Kept)
		}
	}
	if fi, err := os.Lstat(filepath.Join(root, "t")); err != nil || !fi.IsDir() {
		t.Errorf("t was replaced: %v %v", fi, err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "other.txt")); string(got) != "target" {
		t.Errorf("the rest of the rewind was not done: %q", got)
	}
	for _, c := range res.Changes {
		if reported[c.Path] {
			t.Errorf("%s is both changed and kept", c.Path)
		}
	}
	// The stat cache must not vouch for a kept file as the target's content.
	s.beforeApply = nil
	c2, err := s.Checkpoint(ctx, "after")
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := s.Entries(c2.ID)
	for _, e := range entries {
		if c, ok := during[e.Path]; ok && e.Blob != Hash(sha256.Sum256([]byte(c))) {
			t.Errorf("checkpoint after the rewind recorded %s with the wrong content", e.Path)
		}
	}
}
