package upkeep

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// newStore returns an object store in a new state directory, with one pack per datum given.
func newStore(t *testing.T, data ...string) (*objects.Store, []objects.Hash) {
	t.Helper()
	state := t.TempDir()
	for _, d := range []string{"objects", "packs"} {
		if err := os.MkdirAll(filepath.Join(state, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	o := objects.New(state)
	var hs []objects.Hash
	for _, d := range data {
		stg := objects.NewStager(o)
		h := objects.Sum([]byte(d))
		if err := stg.PutBytes(h, []byte(d)); err != nil {
			t.Fatal(err)
		}
		if err := stg.Commit(); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return o, hs
}

// MergeBatch takes the smallest packs first, at most maxPacks, and none when fewer than two
// are small; Repack then leaves one pack holding every object.
func TestMergeBatchSmallestFirst(t *testing.T) {
	o, hs := newStore(t, "a much longer object than the others", "bb", "c")
	batch, err := MergeBatch(o, 2)
	if err != nil || len(batch) != 2 {
		t.Fatalf("batch %v, %v", batch, err)
	}
	var got []objects.Hash
	for _, src := range batch {
		got = append(got, src.Live[0].Hash)
	}
	if !slices.Contains(got, hs[1]) || !slices.Contains(got, hs[2]) {
		t.Fatalf("batch holds %v, want the two smallest %v", got, hs[1:])
	}
	if err := Repack(o, batch); err != nil {
		t.Fatal(err)
	}
	if err := Repack(o, mustBatch(t, o, 64)); err != nil {
		t.Fatal(err)
	}
	if ids, _ := o.PackIDs(); len(ids) != 1 {
		t.Fatalf("%d packs after merging all, want 1", len(ids))
	}
	for _, h := range hs {
		if ok, err := o.Has(h); !ok || err != nil {
			t.Fatalf("object %s lost by the merge: %v", h, err)
		}
	}
	if batch, err := MergeBatch(o, 64); batch != nil || err != nil {
		t.Fatalf("one pack left, yet a batch %v, %v", batch, err)
	}
}

func mustBatch(t *testing.T, o *objects.Store, n int) []Source {
	t.Helper()
	b, err := MergeBatch(o, n)
	if err != nil || len(b) < 2 {
		t.Fatalf("batch %v, %v", b, err)
	}
	return b
}

// An object damaged in its pack stops the repack with a CorruptError naming the pack, and
// leaves every source pack and no new one: nothing is lost, nothing half-written.
func TestRepackRefusesDamagedObject(t *testing.T) {
	o, _ := newStore(t, "first object", "second object")
	batch := mustBatch(t, o, 64)
	bad := o.PackPath(batch[1].ID)
	f, err := os.OpenFile(bad, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("X"), batch[1].Live[0].Off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = Repack(o, batch)
	var ce *objects.CorruptError
	if !errors.As(err, &ce) || ce.Path != bad {
		t.Fatalf("repack of a damaged pack: %v, want a CorruptError naming %s", err, bad)
	}
	ids, _ := o.PackIDs()
	slices.Sort(ids)
	want := []string{batch[0].ID, batch[1].ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("packs after a failed repack: %v, want the sources %v", ids, want)
	}
	if left, _ := o.IndexlessPacks(); len(left) != 0 {
		t.Fatalf("a failed repack left packs without an index: %v", left)
	}
}
