package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

func packFiles(t *testing.T, s *Store) (packs, idxs int) {
	t.Helper()
	names, _ := platform.ReadDirNames(packDir(s))
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, ".pack"):
			packs++
		case strings.HasSuffix(n, ".idx"):
			idxs++
		}
	}
	return packs, idxs
}

// A large batch of small files is stored as one pack; restores read from it; GC rewrites it.
func TestPacks(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 200; i++ {
		put(t, root, fmt.Sprintf("d%d/f%03d.txt", i%7, i), fmt.Sprintf("file %d\n", i), 0o644)
	}
	put(t, root, "big.bin", strings.Repeat("x", objects.SmallFile+1), 0o644) // large: stays loose
	s := mustOpen(t, root, Options{})
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if p, i := packFiles(t, s); p != 1 || i != 1 || countObjects(t, s) != 1 || a.NewObjects != 201 {
		t.Fatalf("packs %d, indexes %d, loose objects %d, new %d", p, i, countObjects(t, s), a.NewObjects)
	}
	want := readState(t, root)
	// Change half the files (a batch larger than objects.FewFiles: a second pack) and rewind.
	for i := 0; i < 200; i += 2 {
		put(t, root, fmt.Sprintf("d%d/f%03d.txt", i%7, i), fmt.Sprintf("changed %d\n", i), 0o600)
	}
	if _, err := s.Rewind(ctx, a.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("after rewind from packs:\n%s", d)
	}
	if p, _ := packFiles(t, s); p != 2 {
		t.Fatalf("%d packs after the safety checkpoint, want 2", p)
	}
	// a is the current position and the rewind's target: protected.
	tl, _ := s.List()
	res, err := s.GC(ctx, GCOptions{KeepLast: 1})
	if err != nil || len(res.Removed) != 0 {
		t.Fatalf("gc removed %v: %v", res.Removed, err)
	}
	// Move forward again, checkpoint, and make that the last operation's safety too (a rewind to
	// the unchanged position): then a and the first safety checkpoint are no longer protected,
	// and the contents only a held (the 100 rewritten files' old versions) go from its pack.
	if _, err := s.Replay(ctx, tl.Last.Safety, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	put(t, root, "new.txt", "n", 0o644)
	last, _ := s.Checkpoint(ctx, "last")
	if _, err := s.Rewind(ctx, last.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err = s.GC(ctx, GCOptions{KeepLast: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The 100 contents only the first checkpoint held, and its trees of d0 … d6 (every one of
	// them holds a rewritten file, so none is shared with a later checkpoint).
	if res.ObjectsRemoved != 107 {
		t.Fatalf("gc removed %d objects, want the 100 contents and 7 trees only the first checkpoint held", res.ObjectsRemoved)
	}
	// The small packs left (what the later checkpoints need of theirs): merged into one.
	if p, i := packFiles(t, s); p != 1 || i != 1 || res.PacksMerged < 2 {
		t.Fatalf("after gc: %d packs, %d indexes, %d merged", p, i, res.PacksMerged)
	}
	for _, c := range []string{last.ID} {
		entries, _ := s.Entries(c)
		for _, e := range entries {
			if ok, err := s.objects.Has(e.Blob); e.Type == TypeFile && (!ok || err != nil) {
				t.Fatalf("%s lost %s: %v", c, e.Path, err)
			}
		}
	}
	want = readState(t, root)
	os.RemoveAll(filepath.Join(root, "d1"))
	if _, err := s.Rewind(ctx, last.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("after rewind from repacked packs:\n%s", d)
	}
}

func TestDamagedPackNotRestored(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 100; i++ {
		put(t, root, fmt.Sprintf("f%03d.txt", i), fmt.Sprintf("file %d\n", i), 0o644)
	}
	s := mustOpen(t, root, Options{})
	a, _ := s.Checkpoint(ctx, "a")
	names, _ := platform.ReadDirNames(packDir(s))
	for _, n := range names {
		if strings.HasSuffix(n, ".pack") {
			p := filepath.Join(packDir(s), n)
			b, _ := os.ReadFile(p)
			for i := range b {
				b[i] ^= 1
			}
			os.WriteFile(p, b, 0o600)
		}
	}
	os.Remove(filepath.Join(root, "f000.txt"))
	before := readState(t, root)
	_, err := s.Rewind(ctx, a.ID, RestoreOptions{})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("rewind from a damaged pack: %v", err)
	}
	if d := diffStates(before, readState(t, root)); d != "" {
		t.Fatalf("a damaged pack changed the workspace:\n%s", d)
	}
}

// TestPackWithoutIndex: the next writer gives a pack whose index is lost its index back from the
// pack's trailer (byte for byte: the checkpoints it holds restore), removes a pack an
// interrupted write left (it starts as a pack does, with no valid trailer) and temporary files,
// and never removes a pack written before packs had a trailer (check --repair rebuilds its
// index: TestCheckRebuildsLegacyPackIndex).
func TestPackWithoutIndex(t *testing.T) {
	root, s := sampleWorkspace(t, 100)
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	idxs, _ := filepath.Glob(filepath.Join(packDir(s), "*.idx"))
	if len(idxs) != 1 {
		t.Fatalf("indexes: %v", idxs)
	}
	want, _ := os.ReadFile(idxs[0])
	os.Remove(idxs[0])
	legacy := filepath.Join(packDir(s), "00000000deadbeef.pack")
	os.WriteFile(legacy, []byte("objects of an older version"), 0o600)
	interrupted := filepath.Join(packDir(s), "00000000cafef00d.pack")
	os.WriteFile(interrupted, []byte(objects.PackMagic+"half written"), 0o600)
	tmp := filepath.Join(packDir(s), ".tmp-00000000cafef00d.idx-1")
	os.WriteFile(tmp, nil, 0o600)
	before := readState(t, root)
	os.WriteFile(filepath.Join(root, "new.txt"), []byte("new\n"), 0o600)
	if _, err := s.Checkpoint(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(idxs[0]); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the lost index was not rebuilt as it was: %v", err)
	}
	if _, err := os.Stat(legacy); err != nil {
		t.Fatalf("a pack of an older version without its index was removed by a writer: %v", err)
	}
	for _, gone := range []string{interrupted, tmp} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Fatalf("%s was left: %v", gone, err)
		}
	}
	if _, err := s.Rewind(ctx, a.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(before, readState(t, root)); d != "" {
		t.Fatalf("the rewind to the checkpoint whose pack lost its index:\n%s", d)
	}
}

// TestGCMergesSmallPacks: every checkpoint that stores something adds a small pack; gc rewrites
// them as one, and every checkpoint still restores. A crash between the new pack's index and the
// old ones' removal leaves objects in two packs: still readable, and merged again by the next gc.
func TestGCMergesSmallPacks(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	var ids []string
	var states []state
	for i := range 8 {
		put(t, root, fmt.Sprintf("d%d/f.txt", i%3), fmt.Sprintf("version %d", i), 0o644)
		c, err := s.Checkpoint(ctx, fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
		states = append(states, readState(t, root))
	}
	if p, _ := packFiles(t, s); p != 8 {
		t.Fatalf("%d packs after 8 checkpoints, want one each", p)
	}
	old := filepath.Join(t.TempDir(), "old")
	os.CopyFS(old, os.DirFS(packDir(s)))
	res, err := s.GC(ctx, GCOptions{})
	if err != nil || res.PacksMerged != 8 || res.ObjectsRemoved != 0 {
		t.Fatalf("gc: merged %d, removed %d: %v", res.PacksMerged, res.ObjectsRemoved, err)
	}
	if p, i := packFiles(t, s); p != 1 || i != 1 {
		t.Fatalf("after gc: %d packs, %d indexes", p, i)
	}
	// The crash: the old packs are back beside the merged one.
	names, _ := platform.ReadDirNames(old)
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(old, n))
		os.WriteFile(filepath.Join(packDir(s), n), b, 0o600)
	}
	s.objects.Forget()
	for i, id := range ids {
		if _, err := s.Rewind(ctx, id, RestoreOptions{}); err != nil {
			t.Fatalf("rewind to %s: %v", id, err)
		}
		if d := diffStates(states[i], readState(t, root)); d != "" {
			t.Fatalf("rewind to %s:\n%s", id, d)
		}
	}
	if _, err := s.GC(ctx, GCOptions{}); err != nil {
		t.Fatal(err)
	}
	if p, i := packFiles(t, s); p != 1 || i != 1 {
		t.Fatalf("after the second gc: %d packs, %d indexes", p, i)
	}
	for _, id := range ids {
		if _, err := s.Rewind(ctx, id, RestoreOptions{DryRun: true}); err != nil {
			t.Fatalf("after the second gc, %s: %v", id, err)
		}
	}
}
