package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Packs whose index file is lost: no writer removes what a checkpoint can still use, and check
// --repair rebuilds the index (from the pack's trailer, or for a pack of an older version from
// the pack and what the store names) before it quarantines anything.

// nestedWorkspace makes a workspace of n small files in folders (so checkpoints have trees),
// with its store.
func nestedWorkspace(t *testing.T, n int) (string, *Store) {
	t.Helper()
	root := t.TempDir()
	for i := range n {
		put(t, root, fmt.Sprintf("d%d/e%d/f%03d.txt", i%4, i%3, i), fmt.Sprintf("content of file %d\n", i), 0o644)
	}
	put(t, root, "empty.txt", "", 0o644)
	return root, mustOpen(t, root, Options{})
}

// toLegacy rewrites pack id as versions before trailers wrote it (its objects' bytes alone, in
// the order they were written) and removes its index: a pack of an older version whose index
// was lost.
func toLegacy(t *testing.T, s *Store, id string) {
	t.Helper()
	entries, err := s.objects.ReadPackIdx(id)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(packDir(s), id+".pack")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:len(objects.PackMagic)]) != objects.PackMagic {
		t.Fatalf("%s is not a pack of this version", name)
	}
	var end int64
	for _, e := range entries {
		end = max(end, e.Off+e.Size)
	}
	if err := os.WriteFile(name, b[len(objects.PackMagic):end], 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(packDir(s), id+".idx"))
}

// packIDsOf lists the store's packs, by their .pack files.
func packIDsOf(t *testing.T, s *Store) []string {
	t.Helper()
	names, _ := platform.ReadDirNames(packDir(s))
	var ids []string
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".pack"); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestCheckRebuildsLegacyPackIndex: two checkpoints, each a pack of contents and trees; the
// first pack becomes an older version's with its index lost, the second loses its index (its
// trailer keeps a copy). check reports both and the contents and trees they hold; a checkpoint
// leaves the older pack alone (it gives the newer one its index back); check --repair finds
// every object of the older one again; both checkpoints then rewind byte for byte.
func TestCheckRebuildsLegacyPackIndex(t *testing.T) {
	root, s := nestedWorkspace(t, 120)
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	stateA := readState(t, root)
	first := packIDsOf(t, s)
	for i := 0; i < 120; i += 7 {
		put(t, root, fmt.Sprintf("d%d/e%d/f%03d.txt", i%4, i%3, i), fmt.Sprintf("changed %d\n", i), 0o644)
	}
	b, err := s.Checkpoint(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	stateB := readState(t, root)
	ids := packIDsOf(t, s)
	if len(first) != 1 || len(ids) != 2 {
		t.Fatalf("packs: %v then %v", first, ids)
	}
	second := ids[0]
	if second == first[0] {
		second = ids[1]
	}
	toLegacy(t, s, first[0])
	os.Remove(filepath.Join(packDir(s), second+".idx"))

	found, _ := checkKinds(t, s, CheckOptions{})
	if n := count(found, "pack-index-missing"); n != 2 || !slices.Contains(found, "manifest-corrupt") && !slices.Contains(found, "manifest-missing") {
		t.Fatalf("check of a store whose packs lost their indexes: %v", found)
	}
	// An ordinary checkpoint: the newer pack gets its index back from its trailer; the older one
	// is left for check --repair, never removed.
	put(t, root, "new.txt", "new\n", 0o644)
	if _, err := s.Checkpoint(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(packDir(s), second+".idx")); err != nil {
		t.Fatalf("the newer pack's index was not rebuilt by the next checkpoint: %v", err)
	}
	if _, err := os.Stat(filepath.Join(packDir(s), first[0]+".pack")); err != nil {
		t.Fatalf("a checkpoint removed the older pack: %v", err)
	}
	found, repaired := checkKinds(t, s, CheckOptions{Repair: true, ReadData: true})
	if !slices.Equal(found, []string{"pack-index-missing"}) || !slices.Equal(repaired, found) {
		t.Fatalf("check --repair: found %v, repaired %v", found, repaired)
	}
	if found, _ := checkKinds(t, s, CheckOptions{ReadData: true}); len(found) != 0 {
		t.Fatalf("after repair: found %v", found)
	}
	for _, c := range []struct {
		id   string
		want state
	}{{a.ID, stateA}, {b.ID, stateB}} {
		if _, err := s.Rewind(ctx, c.id, RestoreOptions{}); err != nil {
			t.Fatalf("rewind to %s: %v", c.id, err)
		}
		if d := diffStates(c.want, readState(t, root)); d != "" {
			t.Fatalf("rewind to %s:\n%s", c.id, d)
		}
	}
}

func count(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}
