package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestCaptureMergePairsEveryPath: the capture pairs each live file with its stat cache entry in
// one pass over both sorted lists; with paths removed, added and sorting around "/" between
// them, every unchanged file is vouched for by the cache (none read) and every new or changed
// one is read, nothing else.
func TestCaptureMergePairsEveryPath(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	var all []string
	for _, d := range []string{"a", "a-b", "a.b", "a/b", "a/b-c", "a0", "b"} {
		for i := range 6 {
			p := fmt.Sprintf("%s/f%d", d, i)
			put(t, root, p, "x "+p, 0o644)
			all = append(all, p)
		}
	}
	put(t, root, "a!", "top", 0o644)
	os.Symlink("a0/f1", filepath.Join(root, "a-link"))
	if _, err := s.Checkpoint(ctx, "base"); err != nil {
		t.Fatal(err)
	}
	// Every third file removed (the cache keeps entries the walk no longer sees), new files
	// between the kept ones (live entries the cache lacks), one changed.
	changed := map[string]bool{}
	for i, p := range all {
		if i%3 == 0 {
			os.Remove(filepath.Join(root, p))
		}
		if i%4 == 1 {
			put(t, root, p+"-new", "new", 0o644)
			changed[p+"-new"] = true
		}
	}
	put(t, root, "a/b/f4", "changed, longer", 0o644)
	changed["a/b/f4"] = true
	backdateIndex(t, s)
	c, err := s.captureLive(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.scan.Entries {
		if e.Type != TypeFile {
			continue
		}
		if e.Cached == changed[e.Path] {
			t.Errorf("%s: vouched for by the cache %v, changed %v", e.Path, e.Cached, changed[e.Path])
		}
	}
	if c.hashed != len(changed) {
		t.Fatalf("read %d files, want the %d new or changed", c.hashed, len(changed))
	}
}
