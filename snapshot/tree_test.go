package snapshot

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
)

// treeEntries is a manifest whose names sort around "/" ("a-b", "a.b" before "a/…", "a0"
// after), with an empty directory, a symlink and a skipped entry.
// TestCheckpointWritesWhatChanged: after one file changes deep in a tree of many directories,
// a checkpoint adds to the store the changed content and the trees of that file's directory and
// its ancestors, not a manifest of every path (which the flat manifests before trees wrote).
func TestCheckpointWritesWhatChanged(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	for d := range 40 {
		for f := range 25 {
			put(t, root, fmt.Sprintf("dir-%02d/sub/file-%03d.txt", d, f), fmt.Sprintf("content %d %d\n", d, f), 0o644)
		}
	}
	s := mustOpen(t, root, Options{})
	first, err := s.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.Entries(first.ID)
	if err != nil {
		t.Fatal(err)
	}
	flat := len(EncodeManifest(entries))
	before := storeBytes(t, s)
	put(t, root, "dir-17/sub/file-004.txt", "changed\n", 0o644)
	second, err := s.Checkpoint(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	grown := storeBytes(t, s) - before
	// The content (8 bytes), the trees of dir-17/sub, dir-17 and the root (about 25, 1 and 40
	// entries of about 100 bytes), the pack index, the checkpoint's metadata and the position.
	if grown > 12<<10 || grown*8 > int64(flat) {
		t.Fatalf("one changed file grew the store by %d bytes (a flat manifest of the tree is %d)", grown, flat)
	}
	got, err := s.Entries(second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(entries) || got[len(got)-1].Path != entries[len(entries)-1].Path {
		t.Fatalf("second checkpoint lists %d paths, want %d", len(got), len(entries))
	}
	// And both checkpoints restore: back to the first.
	want := readState(t, root)
	put(t, root, "dir-17/sub/file-004.txt", "again\n", 0o644)
	if _, err := s.Rewind(ctx, second.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("rewind:\n%s", d)
	}
}

// storeBytes is the size of every file in the store but the stat cache (a cache rewritten in
// place, not growth).
func storeBytes(t *testing.T, s *Store) int64 {
	var n int64
	filepath.WalkDir(s.StateDir(), func(p string, d fs.DirEntry, err error) error {
		// The commit log copies what a checkpoint wrote until the next other writer empties it.
		if err == nil && !d.IsDir() && d.Name() != "index" && d.Name() != logFile {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// TestFlatManifestStoreReadable: a store written before trees (its checkpoints' manifests flat
// "rewind-manifest 1" files) is read as it was: a rewind to such a checkpoint restores it, GC
// keeps what it needs, Check finds nothing wrong, and the next checkpoint writes trees.
func TestFlatManifestStoreReadable(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	put(t, root, "a/b.txt", "old b\n", 0o644)
	put(t, root, "c.txt", "old c\n", 0o600)
	s := mustOpen(t, root, Options{})
	cur, err := s.Checkpoint(ctx, "tree")
	if err != nil {
		t.Fatal(err)
	}
	want := readState(t, root)
	// Rewrite the checkpoint as the earlier format had it: a flat manifest, metadata naming it.
	entries, _ := s.Entries(cur.ID)
	flat := EncodeManifest(entries)
	fh := Hash(sha256.Sum256(flat))
	if err := os.WriteFile(filepath.Join(s.StateDir(), "manifests", fh.String()), flat, 0o600); err != nil {
		t.Fatal(err)
	}
	cp := cur.Checkpoint
	cp.Manifest, cp.Label = fh, "flat"
	b, id := encodeCheckpoint(&cp)
	if err := os.WriteFile(filepath.Join(s.StateDir(), "checkpoints", id), b, 0o600); err != nil {
		t.Fatal(err)
	}
	put(t, root, "a/b.txt", "new b\n", 0o644)
	os.Remove(filepath.Join(root, "c.txt"))
	if _, err := s.Rewind(ctx, id, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("rewind to a flat manifest:\n%s", d)
	}
	got, err := s.Entries(id)
	if err != nil || !slices.Equal(got, entries) {
		t.Fatalf("entries of the flat checkpoint: %v\n%+v\nwant\n%+v", err, got, entries)
	}
	if _, err := s.GC(ctx, GCOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Check(ctx, CheckOptions{ReadData: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range rep.Sections {
		if len(sec.Problems) > 0 {
			t.Fatalf("check of a store with a flat manifest: %s: %+v", sec.Name, sec.Problems)
		}
	}
	put(t, root, "d.txt", "d\n", 0o644)
	next, err := s.Checkpoint(ctx, "next")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := os.ReadFile(filepath.Join(s.StateDir(), "manifests", next.Manifest.String()))
	if !strings.HasPrefix(string(mb), manifest.TreeMagic) {
		t.Fatalf("a new checkpoint's manifest starts %.20q, want a tree", mb)
	}
}

// TestTreesReadByAnotherProcess: a Store that read the pack indexes (a long-lived MCP server
// or UI: readers take no lock) reads a checkpoint that another process took since, whose trees
// are in a pack it has not seen, and one whose pack a GC in another process rewrote.
func TestTreesReadByAnotherProcess(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	put(t, root, "a/b/c.txt", "one\n", 0o644)
	reader := mustOpen(t, root, Options{})
	writer := mustOpen(t, root, Options{})
	first, err := writer.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Entries(first.ID); err != nil { // loads the pack indexes
		t.Fatal(err)
	}
	put(t, root, "a/b/d.txt", "two\n", 0o644)
	second, err := writer.Checkpoint(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := reader.Entries(second.ID); err != nil || len(e) != 4 {
		t.Fatalf("a checkpoint another process took: %d entries, %v", len(e), err)
	}
	if _, err := writer.GC(ctx, GCOptions{KeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	if e, err := reader.Entries(second.ID); err != nil || len(e) != 4 {
		t.Fatalf("after a gc in another process: %d entries, %v", len(e), err)
	}
}
