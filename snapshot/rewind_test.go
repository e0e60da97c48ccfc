package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

var ctx = context.Background()

// baseTree writes a small workspace with every kind of entry; where the system makes no symlinks
// (workspacetest.Symlink) it has none, and a test that checks them calls needSymlinks.
func baseTree(t *testing.T, root string) {
	put(t, root, "README.md", "# hello\n", 0o644)
	put(t, root, "src/main.go", "package main\n\nfunc main() {}\n", 0o644)
	put(t, root, "src/util/strings.go", "package util\n", 0o644)
	put(t, root, "bin/run.sh", "#!/bin/sh\necho run\n", 0o755)
	put(t, root, "docs/old.txt", "old notes\n", 0o600)
	put(t, root, "vendor/lib/.git/HEAD", "ref: refs/heads/main\n", 0o644)
	put(t, root, "vendor/lib/lib.go", "package lib\n", 0o644)
	os.MkdirAll(filepath.Join(root, "empty/inner"), 0o755)
	os.Symlink("src/main.go", filepath.Join(root, "link"))
	os.Symlink("../nowhere", filepath.Join(root, "src/dangling"))
}

// needSymlinks skips the test when baseTree could make no symlink in root (Windows without
// Developer Mode or the privilege; Wine 8 makes one it cannot find again).
func needSymlinks(t *testing.T, root string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(root, "link")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
}

func TestBashChangesUndoneAndReplayed(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	needSymlinks(t, root)
	chain := &chainLog{}
	s := mustOpen(t, root, Options{Recorder: chain})
	a, err := s.Checkpoint(ctx, "start")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ID) != IDLen || a.Counts.Files != 7 || a.Counts.Symlinks != 2 || a.Kind != KindNormal || a.Parent != "" {
		t.Fatalf("first checkpoint: %+v", a)
	}
	if a.NewObjects != 7 || a.Hashed != 7 {
		t.Fatalf("first checkpoint stored %d objects, hashed %d; want 7, 7", a.NewObjects, a.Hashed)
	}
	before := readState(t, root)
	sh(t, root, `
		echo new > added.txt
		rm docs/old.txt
		mv src/util/strings.go src/util/str.go
		chmod 755 README.md
		chmod 700 src
		ln -sfn README.md link
		mkdir -p fresh/empty
		rmdir empty/inner
		echo "ref: refs/heads/feature" > vendor/lib/.git/HEAD
		mkdir vendor/lib/.git/refs
		rm bin/run.sh && mkdir bin/run.sh
		rm src/dangling && echo now-a-file > src/dangling
	`)
	after := readState(t, root)
	if diffStates(before, after) == "" {
		t.Fatal("the script changed nothing")
	}
	res, err := s.Rewind(ctx, a.ID[:6], RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffStates(before, readState(t, root)); d != "" {
		t.Fatalf("after rewind the workspace differs from the checkpoint:\n%s", d)
	}
	if res.To != a.ID || res.From != a.ID || !res.SafetyCreated || res.Safety == a.ID || len(res.Changes) == 0 {
		t.Fatalf("rewind result: %+v", res)
	}
	// Replay to the safety checkpoint: forward to the state the rewind left.
	if _, err := s.Replay(ctx, res.Safety, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(after, readState(t, root)); d != "" {
		t.Fatalf("after replay the workspace differs from the state before the rewind:\n%s", d)
	}
	// Backward is not a replay.
	if _, err := s.Replay(ctx, a.ID, RestoreOptions{}); !errors.Is(err, ErrNotForward) || !strings.Contains(err.Error(), "use rewind") {
		t.Fatalf("replay backward: %v", err)
	}
	tl, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if tl.Current != res.Safety || len(tl.Checkpoints) != 2 || tl.Checkpoints[1].Kind != KindSafety || tl.Checkpoints[1].Parent != a.ID {
		t.Fatalf("timeline: %+v", tl)
	}
	want := []string{"checkpoint", "checkpoint", "rewind", "replay"}
	if got := chain.kinds(); !slices.Equal(got, want) {
		t.Fatalf("chain kinds %v, want %v", got, want)
	}
	if m := chain.entries[0].Data["manifest"]; m != a.Manifest.String() {
		t.Fatalf("chain manifest %v, want %s", m, a.Manifest)
	}
	if d := chain.entries[2].Data; d["to"] != a.ID || d["safety"] != res.Safety || d["outcome"] != "completed" {
		t.Fatalf("rewind record: %v", d)
	}
}

func TestNoChangeCheckpointReadsNothing(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	s := mustOpen(t, root, Options{})
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	// Make the index older than every file so nothing is racily clean.
	backdateIndex(t, s)
	b, err := s.Checkpoint(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if b.Hashed != 0 || b.NewObjects != 0 || b.Manifest != a.Manifest || b.Parent != a.ID || b.ID == a.ID {
		t.Fatalf("no-change checkpoint: hashed %d, new %d, manifest equal %v, parent %s", b.Hashed, b.NewObjects, b.Manifest == a.Manifest, b.Parent)
	}
	put(t, root, "src/main.go", "package main // changed\n", 0o644)
	c, err := s.Checkpoint(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.Hashed != 1 || c.NewObjects != 1 || c.Manifest == a.Manifest {
		t.Fatalf("one-change checkpoint: hashed %d, new %d", c.Hashed, c.NewObjects)
	}
}

func TestRewindUnchangedReusesPosition(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	s := mustOpen(t, root, Options{})
	a, _ := s.Checkpoint(ctx, "a")
	put(t, root, "x.txt", "x", 0o644)
	b, _ := s.Checkpoint(ctx, "b")
	res, err := s.Rewind(ctx, a.ID, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.SafetyCreated || res.Safety != b.ID || len(res.Changes) != 1 || res.Changes[0].Kind != ChangeDeleted {
		t.Fatalf("rewind from an unchanged position: %+v", res)
	}
	if _, err := os.Lstat(filepath.Join(root, "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("x.txt still there: %v", err)
	}
	if _, err := s.Replay(ctx, b.ID[:4], RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "x.txt")); err != nil {
		t.Fatal(err)
	}
}

func TestDryRunTouchesNothing(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	s := mustOpen(t, root, Options{})
	a, _ := s.Checkpoint(ctx, "a")
	put(t, root, "README.md", "changed", 0o644)
	os.Remove(filepath.Join(root, "docs/old.txt"))
	before := readState(t, root)
	res, err := s.Rewind(ctx, a.ID, RestoreOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffStates(before, readState(t, root)); d != "" {
		t.Fatalf("dry run changed the workspace:\n%s", d)
	}
	kinds := map[string]ChangeKind{}
	for _, c := range res.Changes {
		kinds[c.Path] = c.Kind
	}
	if len(kinds) != 2 || kinds["README.md"] != ChangeModified || kinds["docs/old.txt"] != ChangeAdded {
		t.Fatalf("dry run changes: %v", kinds)
	}
	tl, _ := s.List()
	if len(tl.Checkpoints) != 1 {
		t.Fatalf("dry run took a checkpoint: %d", len(tl.Checkpoints))
	}
}

func TestDiff(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	needSymlinks(t, root)
	s := mustOpen(t, root, Options{})
	a, _ := s.Checkpoint(ctx, "a")
	put(t, root, "README.md", "changed", 0o644)
	os.Chmod(filepath.Join(root, "src/main.go"), 0o444) // the write bit: Windows keeps it too
	os.Remove(filepath.Join(root, "docs/old.txt"))
	os.Remove(filepath.Join(root, "link"))
	os.Mkdir(filepath.Join(root, "link"), 0o755)
	put(t, root, "new.txt", "n", 0o644)
	want := map[string]ChangeKind{"README.md": ChangeModified, "src/main.go": ChangeMode, "docs/old.txt": ChangeDeleted, "link": ChangeType, "new.txt": ChangeAdded}
	check := func(d *DiffResult) {
		t.Helper()
		got := map[string]ChangeKind{}
		for _, c := range d.Changes {
			got[c.Path] = c.Kind
		}
		if len(got) != len(want) {
			t.Fatalf("diff: %v, want %v", got, want)
		}
		for p, k := range want {
			if got[p] != k {
				t.Fatalf("diff %s: %s, want %s", p, got[p], k)
			}
		}
	}
	d, err := s.Diff(ctx, a.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	check(d)
	b, _ := s.Checkpoint(ctx, "b")
	if d, err = s.Diff(ctx, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	check(d)
	if d, err = s.Diff(ctx, b.ID, ""); err != nil || len(d.Changes) != 0 {
		t.Fatalf("diff against an equal workspace: %v %v", d, err)
	}
}

func TestResolve(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	ids := map[string]bool{}
	// Enough checkpoints that two share a first hex digit... and then check a 4-digit prefix.
	for i := 0; i < 20; i++ {
		put(t, root, "f", strings.Repeat("x", i), 0o644)
		c, err := s.Checkpoint(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		ids[c.ID] = true
	}
	for id := range ids {
		got, err := s.Resolve(strings.ToUpper(id[:8]))
		if err != nil || got != id {
			t.Fatalf("Resolve(%s): %s %v", id[:8], got, err)
		}
	}
	if _, err := s.Resolve("abc"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("short prefix: %v", err)
	}
	if _, err := s.Resolve("zzzz"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("non-hex: %v", err)
	}
	// Make an ambiguity by hand: two metadata files sharing a prefix are what a collision looks like.
	var one string
	for id := range ids {
		one = id
		break
	}
	fake := one[:4] + "000000ff"
	os.WriteFile(filepath.Join(s.StateDir(), "checkpoints", fake), []byte("{}"), 0o600)
	_, err := s.Resolve(one[:4])
	var amb *AmbiguousError
	if !errors.As(err, &amb) || !errors.Is(err, ErrAmbiguous) || len(amb.Candidates) != 2 || !strings.Contains(err.Error(), fake) {
		t.Fatalf("ambiguous prefix: %v", err)
	}
	// The hand-made file fails its self-check.
	if _, err := s.Get(fake); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("tampered metadata: %v", err)
	}
}

// backdateIndex sets the stat cache's mtime into the past, so that no entry is racily clean:
// what a checkpoint taken a few seconds after the last one sees.
func backdateIndex(t testing.TB, s *Store) {
	t.Helper()
	name := filepath.Join(s.StateDir(), "index")
	// Fold the log into the index first: its records' seals cannot be moved.
	idx, _, err := statcache.Load(name)
	if err != nil || idx.Base == 0 {
		t.Fatalf("no stat cache to backdate: %v", err)
	}
	if err := s.saveIndex(idx.Entries, idx.Rules); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(name, farFuture, farFuture); err != nil {
		t.Fatal(err)
	}
}
