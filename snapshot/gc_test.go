package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/upkeep"
)

func TestGCKeepsWhatItMust(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	var ids []string
	for i := 0; i < 6; i++ {
		put(t, root, fmt.Sprintf("f%d.txt", i), fmt.Sprintf("content %d", i), 0o644)
		c, err := s.Checkpoint(ctx, fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	put(t, root, "dirty.txt", "unsaved", 0o644)
	rw, err := s.Rewind(ctx, ids[1], RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Timeline: 0 1 2 3 4 5 safety; position 1. Keep the last 2 (5, safety), plus the protected:
	// the current position (1) and the last rewind's safety checkpoint.
	objectsBefore := countObjects(t, s)
	dry, err := s.GC(ctx, GCOptions{KeepLast: 2, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if countObjects(t, s) != objectsBefore {
		t.Fatal("dry run removed objects")
	}
	res, err := s.GC(ctx, GCOptions{KeepLast: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ids[0], ids[2], ids[3], ids[4]}
	if !slices.Equal(res.Removed, want) || !slices.Equal(dry.Removed, want) {
		t.Fatalf("removed %v (dry run %v), want %v", res.Removed, dry.Removed, want)
	}
	if res.Kept != 3 || res.ObjectsRemoved != 0 {
		// Every content is still in a kept checkpoint (5 and the safety contain all files).
		t.Fatalf("kept %d, objects removed %d", res.Kept, res.ObjectsRemoved)
	}
	// Undo the rewind: the safety checkpoint is restorable.
	if _, err := s.Replay(ctx, rw.Safety, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "dirty.txt")); string(b) != "unsaved" {
		t.Fatalf("dirty.txt after replay: %q", b)
	}
	// Now drop everything but the newest (and the protected ones: current, and the replay's
	// safety, which is ids[1] since the workspace had not changed since the rewind): the
	// content that only a dropped checkpoint held goes.
	put(t, root, "f9.txt", "transient", 0o644)
	if _, err := s.Checkpoint(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	put(t, root, "f9.txt", "final", 0o644)
	if _, err := s.Checkpoint(ctx, "last"); err != nil {
		t.Fatal(err)
	}
	res, err = s.GC(ctx, GCOptions{KeepLast: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.ObjectsRemoved != 1 || res.BytesFreed != int64(len("transient")) || len(res.Removed) != 3 || !slices.Contains(res.Protected, ids[1]) {
		t.Fatalf("objects removed %d, bytes %d", res.ObjectsRemoved, res.BytesFreed)
	}
	tl, _ := s.List()
	for _, c := range tl.Checkpoints {
		if _, err := s.Rewind(ctx, c.ID, RestoreOptions{DryRun: true}); err != nil {
			t.Fatalf("kept checkpoint %s not restorable: %v", c.ID, err)
		}
		entries, _ := s.Entries(c.ID)
		for _, e := range entries {
			if ok, _ := s.objects.Has(e.Blob); e.Type == TypeFile && !ok {
				t.Fatalf("kept checkpoint %s lost object of %s", c.ID, e.Path)
			}
		}
	}
	if _, err := s.GC(ctx, GCOptions{KeepLast: -1}); err == nil {
		t.Fatal("negative KeepLast accepted")
	}
}

func TestGCKeepWithin(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	put(t, root, "a", "a", 0o644)
	old, _ := s.Checkpoint(ctx, "old")
	put(t, root, "a", "b", 0o644)
	s.Checkpoint(ctx, "mid")
	put(t, root, "a", "c", 0o644)
	s.Checkpoint(ctx, "new")
	res, err := s.GC(ctx, GCOptions{KeepWithin: time.Hour})
	if err != nil || len(res.Removed) != 0 {
		t.Fatalf("keep within an hour removed %v: %v", res.Removed, err)
	}
	res, err = s.GC(ctx, GCOptions{KeepWithin: time.Nanosecond})
	if err != nil || len(res.Removed) != 2 || res.Removed[0] != old.ID {
		t.Fatalf("keep within 1ns: %+v %v", res, err)
	}
	if res, err = s.GC(ctx, GCOptions{}); err != nil || len(res.Removed) != 0 {
		t.Fatalf("gc without rules removed checkpoints: %+v %v", res, err)
	}
}

func countObjects(t *testing.T, s *Store) int {
	n := 0
	filepath.Walk(filepath.Join(s.state, "objects"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// TestGCLeavesOthersTemporaries: the state directory's temporary files belong to writers that
// hold other locks than the store's (the chain, the ledger, the gateway); GC removes only those
// old enough to be a crash's leftovers, never one being written.
func TestGCLeavesOthersTemporaries(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	put(t, root, "a.txt", "a", 0o644)
	if _, err := s.Checkpoint(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(s.StateDir(), ".tmp-chain-123")
	stale := filepath.Join(s.StateDir(), ".tmp-savings-456")
	for _, n := range []string{fresh, stale} {
		if err := os.WriteFile(n, []byte("in flight"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * upkeep.TempAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GC(ctx, GCOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Fatalf("GC removed a temporary file being written by another writer: %v", err)
	}
	if _, err := os.Lstat(stale); err == nil {
		t.Fatal("GC kept a temporary file a crash left hours ago")
	}
}
