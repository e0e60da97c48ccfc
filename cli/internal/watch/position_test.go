package watch

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWritePositionUnchanged: writing the position the store already holds leaves its file
// alone (the hook's unchanged workspace pays no fsync); a new position replaces it.
func TestWritePositionUnchanged(t *testing.T) {
	store := t.TempDir()
	name := filepath.Join(dir(store), "position")
	if err := WritePosition(store, "aaa", "w:1"); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := WritePosition(store, "aaa", "w:1"); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Fatal("the same position was written again (a new file replaced the old)")
	}
	for _, p := range []Position{{"aaa", "w:2"}, {"bbb", "w:2"}} {
		if err := WritePosition(store, p.Checkpoint, p.Token); err != nil {
			t.Fatal(err)
		}
		if got := ReadPosition(store); got != p {
			t.Fatalf("position = %+v, want %+v", got, p)
		}
	}
}

// TestReadPositionAfterACrash: what a crash can leave of the unsynced position file (nothing, an
// empty file, a torn one) reads as no position, so the next checkpoint walks the tree.
func TestReadPositionAfterACrash(t *testing.T) {
	store := t.TempDir()
	if err := WritePosition(store, "aaa", "w:1"); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir(store), "position")
	whole, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, left := range [][]byte{nil, whole[:len(whole)/2], make([]byte, len(whole))} {
		if err := os.WriteFile(name, left, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ReadPosition(store); got != (Position{}) {
			t.Errorf("position file %q reads as %+v, want none", left, got)
		}
	}
}
