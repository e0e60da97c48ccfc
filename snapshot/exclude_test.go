package snapshot

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

func TestExcludedPathsUntouched(t *testing.T) {
	root := t.TempDir()
	put(t, root, IgnoreFile, "build/\n*.log\n!keep.log\n/cache\n", 0o644)
	put(t, root, "src/a.go", "a", 0o644)
	put(t, root, "build/out.bin", "v1", 0o755)
	put(t, root, "src/debug.log", "log v1", 0o644)
	put(t, root, "src/keep.log", "keep v1", 0o644)
	put(t, root, "cache/x", "c1", 0o644)
	put(t, root, "gone/build/artifact", "in a folder the target lacks", 0o644)
	s := mustOpen(t, root, Options{})
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if a.ExcludedCount != 4 || !slices.Equal(a.Excluded, []string{"build", "cache", "gone/build", "src/debug.log"}) {
		t.Fatalf("excluded: %d %v", a.ExcludedCount, a.Excluded)
	}
	entries, _ := s.Entries(a.ID)
	for _, e := range entries {
		if strings.HasPrefix(e.Path, "build") || strings.HasPrefix(e.Path, "cache") || strings.HasSuffix(e.Path, "debug.log") || e.Path == ".rewind" || strings.HasPrefix(e.Path, ".rewind/") {
			t.Fatalf("excluded path captured: %s", e.Path)
		}
	}
	// Change everything, excluded or not.
	put(t, root, "build/out.bin", "v2", 0o755)
	put(t, root, "build/new.o", "new", 0o644)
	put(t, root, "src/debug.log", "log v2", 0o644)
	put(t, root, "src/keep.log", "keep v2", 0o644)
	put(t, root, "cache/y", "c2", 0o644)
	put(t, root, "later/build/x", "x", 0o644) // a new folder whose only content is excluded
	os.RemoveAll(filepath.Join(root, "gone/build"))
	put(t, root, "gone/build/artifact", "rebuilt", 0o644)
	put(t, root, "src/a.go", "a2", 0o644)
	excludedBefore := map[string]string{}
	for p, v := range readState(t, root) {
		if strings.HasPrefix(p, "build") || strings.HasPrefix(p, "cache") || strings.HasSuffix(p, "debug.log") || strings.Contains(p, "/build") {
			excludedBefore[p] = v
		}
	}
	res, err := s.Rewind(ctx, a.ID, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := readState(t, root)
	for p, v := range excludedBefore {
		if after[p] != v {
			t.Errorf("excluded %s changed by the rewind: %q -> %q", p, v, after[p])
		}
	}
	if got, _ := os.ReadFile(filepath.Join(root, "src/keep.log")); string(got) != "keep v1" {
		t.Errorf("re-included keep.log not restored: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "src/a.go")); string(got) != "a" {
		t.Errorf("src/a.go not restored: %q", got)
	}
	// "later" is not in the target, but holds an excluded folder: it is kept and reported.
	found := false
	for _, k := range res.Kept {
		if k.Path == "later" {
			found = true
		}
	}
	if !found {
		t.Errorf("kept dirs not reported: %+v", res.Kept)
	}
}

func TestSpecialFilesSkippedAndKept(t *testing.T) {
	root := t.TempDir()
	put(t, root, "a.txt", "a", 0o644)
	mkfifo(t, filepath.Join(root, "pipe"), 0o644)
	// Unix socket paths are limited to ~108 bytes: listen from inside root with a short name.
	wd, _ := os.Getwd()
	os.Chdir(root)
	l, err := net.Listen("unix", "sock")
	os.Chdir(wd)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := mustOpen(t, root, Options{})
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, sk := range a.Skipped {
		reasons[sk.Path] = sk.Reason
	}
	if reasons["pipe"] != "fifo" || reasons["sock"] != "socket" || a.Counts.Skipped != 2 {
		t.Fatalf("skipped: %+v", a.Skipped)
	}
	put(t, root, "b.txt", "b", 0o644)
	if _, err := s.Rewind(ctx, a.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"pipe", "sock"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s removed by the rewind: %v", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt not removed")
	}
}

// TestRacyClean: a file changed after it was hashed, within the timestamp granularity of the
// stat cache's write, can have exactly the stat the cache recorded. Such an entry (mtime not older
// than the index file) must be hashed again, as git does; an older entry is trusted.
func TestRacyClean(t *testing.T) {
	root := t.TempDir()
	put(t, root, "f.txt", "version 1", 0o644)
	s := mustOpen(t, root, Options{})
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "f.txt", "version 2", 0o644) // same size
	st, err := platform.Lstat(filepath.Join(root, "f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Forge the race: the cache holds the new stat with the old hash, as if the write landed
	// between the hash and the stat, in the same clock tick as the cache's own write.
	entries, _ := s.Entries(a.ID)
	forge := func(indexMtime time.Time) {
		t.Helper()
		name := filepath.Join(s.StateDir(), "index")
		os.Remove(statcache.LogName(name)) // the whole cache is forged: the index, no log
		os.WriteFile(name, statcache.Encode([]statcache.Entry{{Path: "f.txt", St: st, Blob: entries[0].Blob}}, Hash{}), 0o600)
		if err := os.Chtimes(name, indexMtime, indexMtime); err != nil {
			t.Fatal(err)
		}
	}
	forge(time.Unix(0, st.Mtime)) // index written in the same tick as the file: racy
	b, err := s.Checkpoint(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if b.Hashed != 1 || b.Manifest == a.Manifest {
		t.Fatalf("racily clean file was trusted: hashed %d, manifest unchanged %v", b.Hashed, b.Manifest == a.Manifest)
	}
	// The same forged entry, in a cache written a second later, is vouched for: that is the
	// rule. Vouched-for files are sampled (sample.go), and with one file the sample is all of
	// it, so the lie is caught and the file read after all.
	forge(time.Unix(0, st.Mtime).Add(time.Second))
	c, err := s.Checkpoint(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.Verified != 1 || !isDistrust(c.Warnings) || c.Manifest != b.Manifest {
		t.Fatalf("an entry older than the cache was not vouched for (and caught lying): verified %d, warnings %q", c.Verified, c.Warnings)
	}
}

func TestDamagedIndexIsRebuilt(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	s := mustOpen(t, root, Options{})
	a, _ := s.Checkpoint(ctx, "a")
	name := filepath.Join(s.StateDir(), "index")
	b, _ := os.ReadFile(name)
	b[len(b)/2] ^= 0xff
	os.WriteFile(name, b, 0o600)
	c, err := s.Checkpoint(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if c.Manifest != a.Manifest || c.Hashed != a.Hashed || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "checksum") {
		t.Fatalf("damaged index: hashed %d, warnings %v", c.Hashed, c.Warnings)
	}
}

func TestCorruptObjectNotRestored(t *testing.T) {
	root := t.TempDir()
	put(t, root, "a.txt", "original content", 0o644)
	s := mustOpen(t, root, Options{})
	a, _ := s.Checkpoint(ctx, "a")
	entries, _ := s.Entries(a.ID)
	loosen(t, s)
	os.WriteFile(s.objects.Path(entries[0].Blob), []byte("damaged content!"), 0o600)
	put(t, root, "a.txt", "edited", 0o644)
	_, err := s.Rewind(ctx, a.ID, RestoreOptions{})
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("rewind with a damaged object: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "edited" {
		t.Fatalf("a damaged object was written: %q", got)
	}
	if !strings.Contains(err.Error(), "put back to the safety checkpoint") {
		t.Fatalf("rewind with a damaged object did not undo: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(s.StateDir(), "journal")); !os.IsNotExist(err) {
		t.Fatalf("journal left behind: %v", err)
	}
}

// TestStateDirElsewhere: a state directory outside the root, and one reached through a symlink
// at root/.rewind: neither the store nor the link is captured or touched.
func TestStateDirElsewhere(t *testing.T) {
	root := t.TempDir()
	elsewhere := t.TempDir()
	symlink(t, elsewhere, filepath.Join(root, ".rewind"))
	put(t, root, "a.txt", "a", 0o644)
	s := mustOpen(t, root, Options{})
	if s.StateDir() != elsewhere {
		t.Fatalf("state dir %s, want %s", s.StateDir(), elsewhere)
	}
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if a.Counts.Files != 1 || a.Counts.Symlinks != 0 {
		t.Fatalf("counts: %+v", a.Counts)
	}
	put(t, root, "b.txt", "b", 0o644)
	if _, err := s.Rewind(ctx, a.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(root, ".rewind")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the .rewind link was touched: %v", err)
	}
	// A state directory outside the root entirely.
	root2 := t.TempDir()
	put(t, root2, "x", "x", 0o644)
	s2 := mustOpen(t, root2, Options{StateDir: filepath.Join(t.TempDir(), "state")})
	c, err := s2.Checkpoint(ctx, "x")
	if err != nil || c.Counts.Files != 1 || c.Counts.Dirs != 0 {
		t.Fatalf("outside state dir: %+v %v", c, err)
	}
	if _, err := Open(root2, Options{StateDir: root2}); err == nil {
		t.Fatal("a state directory equal to the root was accepted")
	}
}
