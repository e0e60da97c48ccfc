package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// logTree makes n files whose mtimes are an hour old (never racily clean) and a store with
// its first checkpoint.
func logTree(t *testing.T, n int) (string, *Store) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "ws")
	for i := range n {
		put(t, root, fmt.Sprintf("d%d/f%03d.txt", i%5, i), fmt.Sprintf("file %d\n", i), 0o644)
		age(t, root, fmt.Sprintf("d%d/f%03d.txt", i%5, i))
	}
	s := mustOpen(t, root, Options{})
	if _, err := s.Checkpoint(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	return root, s
}

func age(t *testing.T, root, rel string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, rel), old, old); err != nil {
		t.Fatal(err)
	}
}

func inode(t *testing.T, name string) uint64 {
	t.Helper()
	return lstat(t, name).Ino
}

// TestStatCacheLogAppends: a checkpoint after one changed file appends that file's entry to the
// log instead of rewriting the index; the next checkpoint trusts it (reads nothing), and a
// removed file is dropped from the cache through the log too.
func TestStatCacheLogAppends(t *testing.T) {
	root, s := logTree(t, 400)
	index := filepath.Join(s.StateDir(), "index")
	before, _ := os.ReadFile(index)
	ino := inode(t, index)
	put(t, root, "d1/f001.txt", "changed\n", 0o644)
	age(t, root, "d1/f001.txt")
	os.Remove(filepath.Join(root, "d2/f002.txt"))
	c, err := s.Checkpoint(ctx, "one change")
	if err != nil || c.Hashed != 1 {
		t.Fatalf("checkpoint: hashed %d, %v", c.Hashed, err)
	}
	after, _ := os.ReadFile(index)
	if !bytes.Equal(before, after) || inode(t, index) != ino {
		t.Fatalf("the index was rewritten (%d bytes, then %d) for one changed file", len(before), len(after))
	}
	log, err := os.ReadFile(statcache.LogName(index))
	if err != nil || len(log) > 512 { // the file, and the trees of its folder and the root
		t.Fatalf("log: %d bytes, %v; want one small record", len(log), err)
	}
	idx, _, err := statcache.Load(index)
	if err != nil || cachedFiles(idx) != 399 {
		t.Fatalf("cache with its log: %d files, %v; want 399", cachedFiles(idx), err)
	}
	c, err = s.Checkpoint(ctx, "no change")
	if err != nil || c.Hashed != 0 {
		t.Fatalf("no-change checkpoint after a logged change: hashed %d, %v", c.Hashed, err)
	}
	if _, err := os.Stat(statcache.LogName(index)); err != nil {
		t.Fatalf("log gone after a checkpoint that changed nothing: %v", err)
	}
	rep, err := s.Check(ctx, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range rep.Sections {
		if len(sec.Problems) > 0 {
			t.Fatalf("check: %s: %+v", sec.Name, sec.Problems)
		}
	}
}

// TestStatCacheLogFolded: once the log would exceed a quarter of the index (and 64 KiB), the
// index is rewritten and the log removed.
func TestStatCacheLogFolded(t *testing.T) {
	root, s := logTree(t, 2000)
	index := filepath.Join(s.StateDir(), "index")
	ino := inode(t, index)
	for i := 0; i < 2000; i += 2 {
		put(t, root, fmt.Sprintf("d%d/f%03d.txt", i%5, i), "changed\n", 0o644)
	}
	if _, err := s.Checkpoint(ctx, "half changed"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(statcache.LogName(index)); err == nil || inode(t, index) == ino {
		t.Fatalf("half the files changed: log kept (%v) or index not rewritten", err)
	}
}

// TestStatCacheLogTorn: a log cut inside a record (a crash while appending) applies up to the
// last whole record; the file it lost is read again, and the next checkpoint rewrites the index.
func TestStatCacheLogTorn(t *testing.T) {
	root, s := logTree(t, 50)
	index := filepath.Join(s.StateDir(), "index")
	put(t, root, "d0/f000.txt", "changed once\n", 0o644)
	age(t, root, "d0/f000.txt")
	if _, err := s.Checkpoint(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(statcache.LogName(index))
	os.Truncate(statcache.LogName(index), fi.Size()-3)
	idx, _, err := statcache.Load(index)
	if err != nil || !idx.LogTorn {
		t.Fatalf("torn log not noticed: %v", err)
	}
	c, err := s.Checkpoint(ctx, "b")
	if err != nil || c.Hashed != 1 {
		t.Fatalf("after a torn log: hashed %d, %v; want the one file it lost", c.Hashed, err)
	}
	if _, err := os.Stat(statcache.LogName(index)); err == nil {
		t.Fatal("the torn log was kept")
	}
	if c, err := s.Checkpoint(ctx, "c"); err != nil || c.Hashed != 0 {
		t.Fatalf("after the rewrite: hashed %d, %v", c.Hashed, err)
	}
}

// TestStatCacheLogOfAnotherIndex: a log that names another index's checksum (the index was
// replaced and the crash came before the log's removal) is ignored.
func TestStatCacheLogOfAnotherIndex(t *testing.T) {
	root, s := logTree(t, 20)
	index := filepath.Join(s.StateDir(), "index")
	put(t, root, "d0/f000.txt", "changed\n", 0o644)
	age(t, root, "d0/f000.txt")
	if _, err := s.Checkpoint(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(statcache.LogName(index))
	idx, _, _ := statcache.Load(index)
	without := slices.DeleteFunc(slices.Clone(idx.Entries), func(e statcache.Entry) bool { return e.Path == "d0/f000.txt" })
	if err := s.saveIndex(without, idx.Rules); err != nil { // a new index without d0/f000.txt
		t.Fatal(err)
	}
	os.WriteFile(statcache.LogName(index), log, 0o600) // the old log, back
	idx, _, _ = statcache.Load(index)
	if cachedFiles(idx) != 19 || !idx.LogTorn {
		t.Fatalf("the old log was applied to a new index: %d files", cachedFiles(idx))
	}
}

// cachedFiles counts the files of a stat cache (not its directories' trees).
func cachedFiles(idx *statcache.Index) int {
	n := 0
	for i := range idx.Entries {
		if !statcache.IsDir(&idx.Entries[i]) {
			n++
		}
	}
	return n
}
