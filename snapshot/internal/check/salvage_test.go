package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// legacyPack writes a pack as versions before trailers wrote it, its objects' bytes alone:
// the tree of d, contents a and b, the tree of e, content c. It returns the pack's name and
// what the store names (every content's size, by hash).
func legacyPack(t *testing.T) (string, map[Hash]int64, [3][]byte) {
	t.Helper()
	contents := [3][]byte{[]byte("content a, the first\n"), []byte("content b\n"), []byte("c, the content of e/c, longest of the three\n")}
	sum := func(b []byte) Hash { return objects.Sum(b) }
	entries := []manifest.Entry{
		{Path: "d", Type: manifest.TypeDir, Mode: 0o755},
		{Path: "d/a", Type: manifest.TypeFile, Mode: 0o644, Size: int64(len(contents[0])), Blob: sum(contents[0])},
		{Path: "d/b", Type: manifest.TypeFile, Mode: 0o644, Size: int64(len(contents[1])), Blob: sum(contents[1])},
		{Path: "e", Type: manifest.TypeDir, Mode: 0o755},
		{Path: "e/c", Type: manifest.TypeFile, Mode: 0o644, Size: int64(len(contents[2])), Blob: sum(contents[2])},
	}
	tr := manifest.EncodeTrees(len(entries), func(i int) *manifest.Entry { return &entries[i] }, nil)
	var pack []byte
	pack = append(pack, tr.Nodes[tr.Dirs["d"]]...)
	pack = append(pack, contents[0]...)
	pack = append(pack, contents[1]...)
	pack = append(pack, tr.Nodes[tr.Dirs["e"]]...)
	pack = append(pack, contents[2]...)
	name := filepath.Join(t.TempDir(), "0000000000000001.pack")
	if err := os.WriteFile(name, pack, 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[Hash]int64{}
	for _, c := range contents {
		want[sum(c)] = int64(len(c))
	}
	return name, want, contents
}

// TestSalvageSkipsWhatNothingNames: with every content named, the whole pack is placed; with
// one content nothing names any more, the scan goes on from the next tree, every object found
// is indexed right, and what lies between (the unnamed content and the one after it) is left
// unindexed, not guessed.
func TestSalvageSkipsWhatNothingNames(t *testing.T) {
	name, want, contents := legacyPack(t)
	trees, err := salvagePack(name, nil, true)
	if err != nil || trees.trees != 2 || len(trees.entries) != 2 {
		t.Fatalf("trees only: %+v, %v; want the 2 trees", trees, err)
	}
	all, err := salvagePack(name, want, false)
	if err != nil {
		t.Fatal(err)
	}
	if all.placed != all.size || len(all.entries) != 5 {
		t.Fatalf("everything named: placed %d of %d bytes, %d objects; want all, 5", all.placed, all.size, len(all.entries))
	}
	drop := objects.Sum(contents[0])
	delete(want, drop)
	some, err := salvagePack(name, want, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(some.entries) != 3 || some.trees != 2 || some.placed != all.size-int64(len(contents[0])+len(contents[1])) {
		t.Fatalf("without content a: %d objects, %d trees, placed %d of %d bytes; want 3, 2, all but a and b",
			len(some.entries), some.trees, some.placed, some.size)
	}
	data, _ := os.ReadFile(name)
	for _, e := range some.entries {
		if objects.Sum(data[e.Off:e.Off+e.Size]) != e.Hash {
			t.Fatalf("entry %s at %d does not hold its object", e.Hash, e.Off)
		}
		if e.Hash == drop || e.Hash == objects.Sum(contents[1]) {
			t.Fatalf("found %s, which lies between an unnamed content and the next tree", e.Hash)
		}
	}
}
