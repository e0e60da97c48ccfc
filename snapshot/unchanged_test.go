package snapshot

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUnchanged: the workspace equals the current position until a file changes, is added or
// removed, and again once the change is undone (the same bytes with another mtime); a
// checkpoint that is not the position is never reported equal; nothing is written.
func TestUnchanged(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	put(t, root, "a.txt", "one", 0o644)
	put(t, root, "d/b.txt", "two", 0o644)
	c1, err := s.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, id string, want bool) {
		t.Helper()
		got, err := s.Unchanged(ctx, id)
		if err != nil || got != want {
			t.Errorf("%s: Unchanged(%s) = %v, %v; want %v", what, id, got, err, want)
		}
	}
	check("just taken", c1.ID, true)
	check("no id", "", false)
	before := readState(t, s.StateDir())
	put(t, root, "a.txt", "ONE", 0o644)
	check("a file changed", c1.ID, false)
	put(t, root, "a.txt", "one", 0o644)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	check("the change undone", c1.ID, true)
	put(t, root, "d/new.txt", "new", 0o644)
	check("a file added", c1.ID, false)
	if err := os.Remove(filepath.Join(root, "d/new.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "d/b.txt")); err != nil {
		t.Fatal(err)
	}
	check("a file removed", c1.ID, false)
	put(t, root, "d/b.txt", "two", 0o644)
	if d := diffStates(before, readState(t, s.StateDir())); d != "" {
		t.Errorf("Unchanged wrote to the store:\n%s", d)
	}
	c2, err := s.Checkpoint(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	check("an older checkpoint", c1.ID, false)
	check("the new position", c2.ID, true)
}
