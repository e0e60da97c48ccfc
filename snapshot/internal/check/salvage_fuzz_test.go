package check

import (
	"crypto/sha256"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// FuzzSalvage: the search of an older pack for its objects never panics, and every entry it
// returns holds its object (its bytes hash to its name), whatever the pack holds.
func FuzzSalvage(f *testing.F) {
	tree := []byte("rewind-tree 1 1\nf 0644 3 " + objects.Hash(sha256.Sum256([]byte("abc"))).String() + " a\x00\x00")
	f.Add(append([]byte("abc"), tree...), int64(3))
	f.Add([]byte("rewind-tree 1 99999999999\n"), int64(1))
	f.Add([]byte("rewind-tree 1 2\nx\x00"), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		trees := findTrees(data)
		want := map[objects.Hash]int64{}
		if size > 0 && size <= int64(len(data)) {
			want[objects.Hash(sha256.Sum256(data[:size]))] = size
		}
		for _, e := range scanContents(data, trees, want) {
			if objects.Hash(sha256.Sum256(data[e.Off:e.Off+e.Size])) != e.Hash {
				t.Fatalf("content entry %+v does not hold its object", e)
			}
		}
		for _, e := range trees {
			if objects.Hash(sha256.Sum256(data[e.Off:e.Off+e.Size])) != e.Hash {
				t.Fatalf("tree entry %+v does not hold its object", e)
			}
		}
	})
}
