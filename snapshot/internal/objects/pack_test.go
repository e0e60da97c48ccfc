package objects

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

// TestPackIndexSearchedInPlace: the lookup form of an index (its entry bytes as read, searched in
// place) finds exactly what the decoded index holds, and an entry that lies outside its pack is
// not found: the object is then missing, which reading it reports.
func TestPackIndexSearchedInPlace(t *testing.T) {
	var entries []PackEntry
	for i := range 300 {
		entries = append(entries, PackEntry{Hash: Sum([]byte(fmt.Sprint(i))), Off: int64(i) * 10, Size: 10})
	}
	slices.SortFunc(entries, func(a, b PackEntry) int { return bytes.Compare(a.Hash[:], b.Hash[:]) })
	b := encodePackIdx(entries)
	p := packIndex{raw: b[len(packIdxMagic)+4 : len(b)-32], size: 3000}
	for _, e := range entries {
		if got, ok := p.find(e.Hash); !ok || got != e {
			t.Fatalf("find(%s) = %+v, %v; want %+v", e.Hash, got, ok, e)
		}
	}
	if _, ok := p.find(Sum([]byte("absent"))); ok {
		t.Fatal("found a hash the index does not hold")
	}
	p.size = 1500 // the pack is shorter than half the entries need
	far := 0
	for _, e := range entries {
		if _, ok := p.find(e.Hash); ok != (e.Off+e.Size <= 1500) {
			t.Fatalf("entry at %d+%d in a pack of 1500 bytes: found %v", e.Off, e.Size, ok)
		}
		if e.Off+e.Size > 1500 {
			far++
		}
	}
	if far == 0 {
		t.Fatal("no entry outside the shortened pack: the test checks nothing")
	}
}
