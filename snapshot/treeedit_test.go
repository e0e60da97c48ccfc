package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// TestEditTreesMatchesWalk: a checkpoint told a few changed paths edits the current manifest's
// trees (reading no other file, sampling no cache entry) and records what a full walk records:
// the same manifest, the same counts; and the stat cache, updated through its log, then holds
// exactly the manifest's files.
func TestEditTreesMatchesWalk(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	put(t, root, IgnoreFile, "build/\n", 0o644)
	put(t, root, "a/one.txt", "one", 0o644)
	put(t, root, "a/sub/two.txt", "two", 0o644)
	put(t, root, "a/sub/deeper/four.txt", "four", 0o644)
	put(t, root, "b/three.txt", "three", 0o644)
	put(t, root, "keep/k.txt", "k", 0o644)
	put(t, root, "untouched/u.txt", "u", 0o644)
	symlink(t, "a/one.txt", filepath.Join(root, "link"))
	s := mustOpen(t, root, Options{StateDir: filepath.Join(t.TempDir(), "store")})
	first, err := s.Checkpoint(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	backdateIndex(t, s) // every file vouched for: a capture would sample some
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
	// Read: a/one.txt, c/new.txt, b/moved/two.txt, b/moved/deeper/four.txt, keep/k.txt.
	if got.Walk.Mode != "changed" || got.Verified != 0 || got.Hashed != 5 {
		t.Fatalf("walk %+v, %d files read, %d sampled: want the trees edited, the 5 files under the changed paths read, none sampled", got.Walk, got.Hashed, got.Verified)
	}
	idx, _, err := statcache.Load(filepath.Join(s.StateDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.Entries(got.ID)
	if err != nil {
		t.Fatal(err)
	}
	var files, cached []string
	for _, e := range entries {
		if e.Type == TypeFile {
			files = append(files, e.Path+" "+e.Blob.String())
		}
	}
	for i := range idx.Entries {
		if e := &idx.Entries[i]; !statcache.IsDir(e) { // folders' trees: treecache.go
			cached = append(cached, e.Path+" "+e.Blob.String())
		}
	}
	if !slices.Equal(files, cached) {
		t.Fatalf("the stat cache holds\n%v\nthe manifest's files are\n%v", cached, files)
	}
	want, err := s.Checkpoint(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if want.Walk.Mode != "full" || got.Manifest != want.Manifest || got.Counts != want.Counts {
		a, _ := s.Entries(want.ID)
		t.Fatalf("edited: manifest %s, counts %+v\nwalked: manifest %s, counts %+v (walk %+v)\nedited %+v\nwalked %+v",
			got.Manifest, got.Counts, want.Manifest, want.Counts, want.Walk, entries, a)
	}
}

// TestEditForgetsStaleFolderTrees: a watcher-assisted edit changes a file's content, which
// changes neither its folder's stat nor its ancestors'. The stat cache must then forget those
// folders' trees, or the next full walk, finding their stat and the file's (new) cache entry
// unchanged, would reuse the trees of before the edit and record the old content.
func TestEditForgetsStaleFolderTrees(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	put(t, root, "a/b/f.txt", "before", 0o644)
	put(t, root, "a/g.txt", "g", 0o644)
	s := mustOpen(t, root, Options{StateDir: filepath.Join(t.TempDir(), "store")})
	first, err := s.Checkpoint(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	backdateIndex(t, s)
	// Rewrite in place (same inode, folder untouched), then the edit the watcher's hint allows.
	f, err := os.OpenFile(filepath.Join(root, "a/b/f.txt"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("after!"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	edited, err := s.CheckpointChanged(ctx, "", &Changed{Since: first.ID, Paths: []string{"a/b/f.txt"}})
	if err != nil || edited.Walk.Mode != "changed" {
		t.Fatalf("edit: %+v, %v", edited, err)
	}
	backdateIndex(t, s) // the file's new entry vouched for, as it would be a moment later
	walked, err := s.Checkpoint(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if walked.Manifest != edited.Manifest {
		t.Fatalf("a full walk after the edit recorded manifest %s, the edit %s: a folder's tree from before the edit was reused", walked.Manifest, edited.Manifest)
	}
}
