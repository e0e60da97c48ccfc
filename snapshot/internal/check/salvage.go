package check

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"slices"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// A pack written before packs had a trailer (objects/packtrailer.go) is its objects' bytes alone: once
// its index is lost, only what the rest of the store says about those objects can find them
// again (check --repair, FORMAT.md "Check"). A tree announces itself ("rewind-tree 1 <count>\n",
// then count entries each ending in two NULs), so every tree is found by its header wherever
// it lies; a content is found where it starts, the object before it having ended there, by the
// hash and size a manifest, a chunk list or the stat cache gives it. Every entry found is right
// by construction (its bytes hash to its name); what cannot be placed is left unindexed, never
// guessed.

// salvaged is what was found in one legacy pack.
type salvaged struct {
	entries []objects.PackEntry // sorted by hash
	trees   int                 // how many are trees
	placed  int64               // bytes the entries cover (overlaps counted once)
	size    int64               // the pack's size
}

// mapPack maps the pack file name for reading; done unmaps it.
func mapPack(name string) (data []byte, done func(), err error) {
	f, err := regular.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	return platform.MapFile(f, fi.Size())
}

// findTrees returns every valid tree in data, by offset.
func findTrees(data []byte) map[int64]objects.PackEntry {
	trees := map[int64]objects.PackEntry{}
	for at := 0; ; {
		i := bytes.Index(data[at:], []byte(manifest.TreeMagic))
		if i < 0 {
			return trees
		}
		at += i
		if n, ok := treeLen(data[at:]); ok {
			trees[int64(at)] = objects.PackEntry{Hash: objects.Hash(sha256.Sum256(data[at : at+n])), Off: int64(at), Size: int64(n)}
		}
		at++
	}
}

// treeLen returns the length of the tree that starts data, when one does and parses.
func treeLen(data []byte) (int, bool) {
	nl := bytes.IndexByte(data[:min(len(data), 64)], '\n')
	if nl < 0 {
		return 0, false
	}
	count, ok := objects.ParseCanonicalInt(string(data[len(manifest.TreeMagic):nl]))
	if !ok || count > int64(manifest.MaxTreeEntries) || count > int64(len(data)-nl)/12 {
		return 0, false
	}
	end := nl + 1
	for range 2 * count {
		i := bytes.IndexByte(data[end:], 0)
		if i < 0 {
			return 0, false
		}
		end += i + 1
	}
	if _, err := manifest.ParseTree(data[:end]); err != nil {
		return 0, false
	}
	return end, true
}

// scanContents walks data from its start, one object after the other: at each offset a tree
// found there, or the first content of a size want has whose hash matches the bytes from
// there; where neither is, it goes on from the next tree (what lies between is not placed).
func scanContents(data []byte, trees map[int64]objects.PackEntry, want map[Hash]int64) []objects.PackEntry {
	var sizes []int64
	for _, n := range want {
		if n > 0 {
			sizes = append(sizes, n)
		}
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	starts := make([]int64, 0, len(trees))
	for off := range trees {
		starts = append(starts, off)
	}
	slices.Sort(starts)
	var out []objects.PackEntry
	var sum Hash
	for off := int64(0); off < int64(len(data)); {
		if t, ok := trees[off]; ok {
			off += t.Size
			continue
		}
		h, done, found := sha256.New(), off, false
		for _, n := range sizes {
			if off+n > int64(len(data)) {
				break
			}
			h.Write(data[done : off+n])
			done = off + n
			h.Sum(sum[:0])
			if want[sum] == n {
				out = append(out, objects.PackEntry{Hash: sum, Off: off, Size: n})
				off, found = off+n, true
				break
			}
		}
		if !found {
			i, _ := slices.BinarySearch(starts, off+1)
			if i == len(starts) {
				break
			}
			off = starts[i]
		}
	}
	return out
}

// salvagePack finds the trees in the legacy pack at name and, given want (every content's size
// the store names, by hash), its contents, and returns the index entries found.
func salvagePack(name string, want map[Hash]int64, treesOnly bool) (*salvaged, error) {
	data, done, err := mapPack(name)
	if err != nil {
		return nil, err
	}
	defer done()
	trees := findTrees(data)
	var all []objects.PackEntry
	for _, t := range trees {
		all = append(all, t)
	}
	if !treesOnly {
		all = append(all, scanContents(data, trees, want)...)
		if n, ok := want[emptyContent]; ok && n == 0 {
			all = append(all, objects.PackEntry{Hash: emptyContent}) // an empty content is anywhere
		}
	}
	slices.SortFunc(all, func(a, b objects.PackEntry) int {
		return cmp.Or(bytes.Compare(a.Hash[:], b.Hash[:]), cmp.Compare(a.Off, b.Off))
	})
	all = slices.CompactFunc(all, func(a, b objects.PackEntry) bool { return a.Hash == b.Hash })
	return &salvaged{entries: all, trees: len(trees), placed: covered(all), size: int64(len(data))}, nil
}

// emptyContent is the hash of no bytes.
var emptyContent = objects.Hash(sha256.Sum256(nil))

// covered returns how many bytes the entries cover, overlaps once.
func covered(es []objects.PackEntry) int64 {
	byOff := slices.Clone(es)
	slices.SortFunc(byOff, func(a, b objects.PackEntry) int { return cmp.Compare(a.Off, b.Off) })
	var n, end int64
	for _, e := range byOff {
		if e.Off+e.Size > end {
			n += e.Off + e.Size - max(e.Off, end)
			end = e.Off + e.Size
		}
	}
	return n
}
