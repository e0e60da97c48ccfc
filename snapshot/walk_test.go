package snapshot

import (
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
)

// TestWalkOrder: the walk emits paths in byte order without a global sort; names that sort
// around "/" ("a-b", "a.b", "a!", "a 1" before "a/…", "a0" after) are where that could go wrong.
func TestWalkOrder(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/x", "a/b/c", "a/b-c", "a/b/d/e", "a-b", "a.b", "a!", "a 1", "a0", "ab/c", "ab-/d", "b", "a/b.c", "a/b0"} {
		put(t, root, p, "x", 0o644)
	}
	os.MkdirAll(filepath.Join(root, "empty/dir"), 0o755)
	os.Symlink("a", filepath.Join(root, "a-link"))
	var seen atomic.Int64
	sc, err := walk(ctx, root, nil, (*Ignore)(nil), 4, &seen)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range sc.entries {
		got = append(got, e.Path)
	}
	want := slices.Clone(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(got) != 22 {
		t.Fatalf("walk order:\n%q\nwant:\n%q", got, want)
	}
}
