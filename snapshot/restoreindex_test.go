package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// TestRewindAppendsToStatCache: a rewind adds what it wrote to the stat cache's log rather than
// rewriting the index, and the cache it leaves vouches for nothing false. Once every entry is
// trusted (the log folded, the index dated in the future), the cache holds no stale or unstored
// entry, a checkpoint reads no file and records exactly the target's manifest, the mode change
// included, which changes a file's stat but not its folder's: a folder tree left cached above it
// would record the old mode.
func TestRewindAppendsToStatCache(t *testing.T) {
	root, s := logTree(t, 200)
	put(t, root, "x/y/run.sh", "#!/bin/sh\n", 0o644)
	put(t, root, "m/n/mode.sh", "#!/bin/sh\n", 0o644)
	put(t, root, "x/y/gone/deep.txt", "deep\n", 0o644)
	symlink(t, "d0", filepath.Join(root, "ln"))
	a, err := s.Checkpoint(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	backdateIndex(t, s)
	put(t, root, "d1/f001.txt", "changed\n", 0o644)
	put(t, root, "d2/new.txt", "new\n", 0o644)
	os.Remove(filepath.Join(root, "d3/f003.txt"))
	os.Chmod(filepath.Join(root, "x/y/run.sh"), 0o755)
	os.Chmod(filepath.Join(root, "m/n/mode.sh"), 0o700) // the only change in m/n: its stat stays
	os.RemoveAll(filepath.Join(root, "x/y/gone"))
	os.Remove(filepath.Join(root, "d4/f004.txt"))
	put(t, root, "d4/f004.txt/now-a-folder.txt", "folder\n", 0o644)
	put(t, root, "newdir/a.txt", "a\n", 0o644)
	os.Remove(filepath.Join(root, "ln"))
	os.Symlink("d1", filepath.Join(root, "ln"))
	index := filepath.Join(s.StateDir(), "index")
	ino := inode(t, index)
	res, err := s.Rewind(ctx, a.ID, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 12 {
		t.Fatalf("rewind changed %d paths, want 12: %+v", len(res.Changes), res.Changes)
	}
	if inode(t, index) != ino {
		t.Error("the rewind rewrote the index instead of appending to its log")
	}
	if _, err := os.Stat(statcache.LogName(index)); err != nil {
		t.Errorf("no log after the rewind: %v", err)
	}
	backdateIndex(t, s)
	if found, _ := checkKinds(t, s, CheckOptions{}); len(found) > 0 {
		t.Fatalf("check after the rewind: %v", found)
	}
	c, err := s.Checkpoint(ctx, "after")
	if err != nil {
		t.Fatal(err)
	}
	if c.Manifest != a.Manifest {
		d, _ := s.Diff(ctx, a.ID, c.ID)
		t.Fatalf("the cache made a checkpoint record another manifest than the target's: %+v", d.Changes)
	}
	if c.Hashed != 0 {
		t.Errorf("checkpoint after the rewind read %d files: the cache lacks what the rewind wrote", c.Hashed)
	}
}

// TestEntriesExcept: a restore compares the live entries but for the contents of the folders the
// target shares with them; names that sort next to a folder's contents ("a.b", "a0", before and
// after "a/") stay.
func TestEntriesExcept(t *testing.T) {
	paths := []string{"a", "a-b", "a-b/x", "a.b", "a.b/x", "a/b", "a/b/c", "a/c", "a/é", "a0", "a0/x", "ab", "z", "z/a/b", "z/y"}
	c := &capture{scan: &walk.Scan{}}
	for _, p := range paths {
		c.scan.Entries = append(c.scan.Entries, walk.LiveEntry{Entry: Entry{Path: p}})
	}
	for _, shared := range [][]string{nil, {"a"}, {"a-b", "a.b", "a"}, {"a.b", "a0"}, {"a/b", "z"}, {"z/a"}, {"a-b", "a.b", "a", "a0", "z"}} {
		var got, want []string
		for _, e := range c.entriesExcept(shared) {
			got = append(got, e.Path)
		}
		for _, p := range paths {
			if !slices.ContainsFunc(shared, func(d string) bool { return strings.HasPrefix(p, d+"/") }) {
				want = append(want, p)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("shared %q:\n got %q\nwant %q", shared, got, want)
		}
	}
}

// TestRewindRefusesParentSwappedForSymlink: a folder replaced by a symlink to a folder outside
// the workspace after the safety checkpoint captured it (while the rewind runs) is refused as a
// parent (ErrUnsafePath), and nothing is written outside.
func TestRewindRefusesParentSwappedForSymlink(t *testing.T) {
	root, s := logTree(t, 20)
	outside := t.TempDir()
	a, err := s.Checkpoint(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "d1/f001.txt", "changed\n", 0o644)
	s.beforeApply = func() {
		os.RemoveAll(filepath.Join(root, "d1"))
		os.Symlink(outside, filepath.Join(root, "d1"))
	}
	_, err = s.Rewind(ctx, a.ID, RestoreOptions{})
	s.beforeApply = nil
	if !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("rewind through a swapped folder: %v, want ErrUnsafePath", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the workspace: %v", ents)
	}
}
