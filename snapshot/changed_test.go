package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// TestCheckpointChangedMatchesWalk: a checkpoint told which paths changed (files written,
// created, removed; a directory renamed; a symlink retargeted; a mode changed; an excluded path)
// records the same manifest a full walk does, and says it used the hint.
func TestCheckpointChangedMatchesWalk(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	put(t, root, IgnoreFile, "build/\n", 0o644)
	put(t, root, "a/one.txt", "one", 0o644)
	put(t, root, "a/sub/two.txt", "two", 0o644)
	put(t, root, "b/three.txt", "three", 0o644)
	put(t, root, "keep/k.txt", "k", 0o644)
	symlink(t, "a/one.txt", filepath.Join(root, "link"))
	s := mustOpen(t, root, Options{StateDir: filepath.Join(t.TempDir(), "store")})
	first, err := s.Checkpoint(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "a/one.txt", "ONE!", 0o644)
	put(t, root, "c/new.txt", "new", 0o600)
	put(t, root, "build/out.o", "excluded", 0o644)
	if err := os.Rename(filepath.Join(root, "a/sub"), filepath.Join(root, "b/moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "b/three.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "b", filepath.Join(root, "link"))
	if err := os.Chmod(filepath.Join(root, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	hint := &Changed{Since: first.ID, Paths: []string{"a/one.txt", "c", "build", "build/out.o", "a/sub", "b/moved", "b/three.txt", "link", "keep"}}
	got, err := s.CheckpointChanged(ctx, "", hint)
	if err != nil {
		t.Fatal(err)
	}
	if got.Walk.Mode != "changed" || got.Walk.Paths != len(hint.Paths) {
		t.Fatalf("walk = %+v, want the hint used", got.Walk)
	}
	want, err := s.Checkpoint(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if want.Walk.Mode != "full" {
		t.Fatalf("walk without a hint = %+v", want.Walk)
	}
	if got.Manifest != want.Manifest {
		a, _ := s.Entries(got.ID)
		b, _ := s.Entries(want.ID)
		t.Fatalf("hinted manifest differs from the full walk's:\nhinted %+v\nwalk   %+v", a, b)
	}
}

// TestCheckpointChangedTrustsTheHint shows the hint is what decides: a change it does not name is
// not seen. (Which is why a watcher answers only when it is sure, and a stale hint is refused.)
func TestCheckpointChangedTrustsTheHint(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	put(t, root, "x.txt", "x", 0o644)
	s := mustOpen(t, root, Options{StateDir: filepath.Join(t.TempDir(), "store")})
	first, err := s.Checkpoint(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "unseen.txt", "u", 0o644)
	got, err := s.CheckpointChanged(ctx, "", &Changed{Since: first.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Walk.Mode != "changed" || got.Manifest != first.Manifest {
		t.Fatalf("walk %+v, manifest %s, want the first's %s", got.Walk, got.Manifest, first.Manifest)
	}
	// The hint is relative to first; the position is now got: refused, and the tree walked.
	again, err := s.CheckpointChanged(ctx, "", &Changed{Since: first.ID})
	if err != nil {
		t.Fatal(err)
	}
	if again.Walk.Mode != "full" || !strings.Contains(again.Walk.Reason, first.ID) || again.Manifest == first.Manifest {
		t.Fatalf("stale hint: walk %+v, manifest %s", again.Walk, again.Manifest)
	}
	// A hint naming the exclusion file, or a path that is not clean, is refused.
	for _, p := range []string{IgnoreFile, "../x", "/abs", "a//b", ""} {
		r, err := s.CheckpointChanged(ctx, "", &Changed{Since: again.ID, Paths: []string{p}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Walk.Mode != "full" || r.Walk.Reason == "" {
			t.Fatalf("path %q: walk %+v, want refused", p, r.Walk)
		}
		again = r
	}
}

// BenchmarkCheckpointChangedNoChange: a checkpoint told that nothing changed (compare with
// CheckpointNoChange, which walks).
func BenchmarkCheckpointChangedNoChange(b *testing.B) {
	ctx := context.Background()
	root, _ := benchTree(b)
	s := mustOpen(b, root, Options{})
	cp, err := s.Checkpoint(ctx, "first")
	if err != nil {
		b.Fatal(err)
	}
	backdateIndex(b, s)
	b.ResetTimer()
	for b.Loop() {
		c, err := s.CheckpointChanged(ctx, "again", &Changed{Since: cp.ID})
		if err != nil {
			b.Fatal(err)
		}
		if c.Hashed != 0 || c.Walk.Mode != "changed" {
			b.Fatalf("hashed %d files of an unchanged tree, walk %+v", c.Hashed, c.Walk)
		}
		cp = c
	}
}

// TestReuseUnchanged: a checkpoint that may reuse the current position (an automatic one), told
// nothing changed since it, reuses it without looking at the tree; told about another
// checkpoint, it looks.
func TestReuseUnchanged(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	put(t, root, "x.txt", "x", 0o644)
	s := mustOpen(t, root, Options{StateDir: filepath.Join(t.TempDir(), "store")})
	first, err := s.Checkpoint(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "unseen.txt", "u", 0o644) // the hint's promise decides: not looked at
	unlock, err := s.lockAndRecover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	res, _, err := s.checkpointLocked(ctx, "auto", KindAuto, true, &Changed{Since: first.ID}, nil)
	if err != nil || !res.Reused || res.ID != first.ID || res.Walk.Mode != "changed" {
		t.Fatalf("reuse with a no-change hint: %+v, %v", res, err)
	}
	res, _, err = s.checkpointLocked(ctx, "auto", KindSafety, true, &Changed{Since: "000000000000"}, nil)
	if err != nil || res.Reused || res.Walk.Mode != "full" || res.Manifest == first.Manifest {
		t.Fatalf("a hint about another checkpoint: %+v, %v", res, err)
	}
}

// TestMergeRead: the position's kept entries (sorted) and the changed paths' (any order) come
// out sorted by path, as a walk lists them ("a.txt" before "a/b": bytes, not folders first).
func TestMergeRead(t *testing.T) {
	list := func(paths ...string) []walk.LiveEntry {
		var es []walk.LiveEntry
		for _, p := range paths {
			es = append(es, walk.LiveEntry{Entry: Entry{Path: p}})
		}
		return es
	}
	for _, tc := range []struct {
		kept, read []string
	}{
		{[]string{"a", "a.txt", "c", "e"}, []string{"f", "a/b", "d", "b"}},
		{nil, []string{"b", "a"}},
		{[]string{"a", "b"}, nil},
		{[]string{"a", "b"}, []string{"d", "c"}},
	} {
		got := mergeRead(append(list(tc.kept...), list(tc.read...)...), len(tc.kept))
		var paths []string
		for _, e := range got {
			paths = append(paths, e.Path)
		}
		want := slices.Sorted(slices.Values(append(slices.Clone(tc.kept), tc.read...)))
		if !slices.Equal(paths, want) {
			t.Errorf("kept %q, read %q: got %q, want %q", tc.kept, tc.read, paths, want)
		}
	}
}
