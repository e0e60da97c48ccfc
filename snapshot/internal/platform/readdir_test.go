package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenDirListing: a folder's listing is every name with the prefix, once, for names of every
// length and a folder whose records take several reads (the listing is sized from the first).
func TestOpenDirListing(t *testing.T) {
	dir := t.TempDir()
	var want []string
	prefix := strings.Repeat("long-folder-name/", 12)
	for i := range 1500 {
		name := fmt.Sprintf("%04d%s", i, strings.Repeat("x", (i*37)%250))
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, prefix+name)
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	want = append(want, prefix+"d")
	fd, got, err := OpenDir(dir, prefix)
	if err != nil {
		t.Fatal(err)
	}
	CloseDir(fd)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d paths, want %d; first difference near %q", len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i]
		}
	}
	return "the end"
}
