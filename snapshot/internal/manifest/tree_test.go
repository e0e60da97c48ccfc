package manifest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

const blobA = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

func treeEntries(t *testing.T) []Entry {
	h, _ := objects.ParseHash(blobA)
	return []Entry{
		{Path: "a", Type: TypeDir, Mode: 0o755},
		{Path: "a!", Type: TypeFile, Mode: 0o644, Size: 5, Blob: h},
		{Path: "a-b", Type: TypeFile, Mode: 0o644, Size: 5, Blob: h},
		{Path: "a.b", Type: TypeSymlink, Mode: 0o777, Size: 1, Target: "a"},
		{Path: "a/b", Type: TypeDir, Mode: 0o700},
		{Path: "a/b-c", Type: TypeSkipped, Reason: "fifo"},
		{Path: "a/b/c", Type: TypeFile, Mode: 0o600, Size: 5, Blob: h},
		{Path: "a/empty", Type: TypeDir, Mode: 0o755},
		{Path: "a0", Type: TypeFile, Mode: 0o4755, Size: 5, Blob: h},
	}
}

func mapSource(tr *Trees) TreeSource {
	return func(h objects.Hash) ([]byte, error) {
		b, ok := tr.Nodes[h]
		if !ok {
			return nil, fmt.Errorf("no tree %s", h)
		}
		return b, nil
	}
}

// TestTreeRoundTrip: a manifest encoded as trees expands to the same entries, and its root and
// subtrees are what FORMAT.md says.
func TestTreeRoundTrip(t *testing.T) {
	want := treeEntries(t)
	tr := EncodeTrees(len(want), func(i int) *Entry { return &want[i] }, nil)
	got, subtrees, err := ExpandTree(tr.Root, mapSource(tr))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(want, got) {
		t.Fatalf("expanded trees differ:\n%+v\nwant\n%+v", got, want)
	}
	if len(subtrees) != 3 || len(tr.Nodes) != 3 { // a, a/b, a/empty
		t.Fatalf("subtrees %d, nodes %d; want 3", len(subtrees), len(tr.Nodes))
	}
	empty := objects.Sum([]byte("rewind-tree 1 0\n"))
	if _, ok := tr.Nodes[empty]; !ok {
		t.Fatalf("the empty directory's tree is not %q", "rewind-tree 1 0\n")
	}
	b := tr.Nodes[subtrees[0]] // a's tree, as the format document shows one
	if !strings.HasPrefix(string(b), "rewind-tree 1 3\nd 0700 0 ") || !strings.Contains(string(b), " b\x00\x00") {
		t.Fatalf("tree of a: %q", b)
	}
}

// TestTreeRefused: trees a restore could be tricked by are refused, as flat manifests are.
func TestTreeRefused(t *testing.T) {
	h, _ := objects.ParseHash(blobA)
	sub := []byte("rewind-tree 1 0\n")
	sh := objects.Sum(sub)
	src := func(x objects.Hash) ([]byte, error) {
		if x == sh {
			return sub, nil
		}
		return nil, fmt.Errorf("no tree %s", x)
	}
	for name, root := range map[string]string{
		"a name with a slash":   "rewind-tree 1 1\nf 0644 5 " + blobA + " a/b\x00\x00",
		"a dot-dot name":        "rewind-tree 1 1\nd 0755 0 " + sh.String() + " ..\x00\x00",
		"unsorted names":        "rewind-tree 1 2\nf 0644 5 " + blobA + " b\x00\x00f 0644 5 " + blobA + " a\x00\x00",
		"a directory, no tree":  "rewind-tree 1 1\nd 0755 0 - a\x00\x00",
		"a missing tree":        "rewind-tree 1 1\nd 0755 0 " + h.String() + " a\x00\x00",
		"a flat manifest entry": "rewind-manifest 1 0\n",
		"a count too large":     "rewind-tree 1 9\n",
		"trailing bytes":        "rewind-tree 1 0\nx",
	} {
		if _, _, err := ExpandTree([]byte(root), src); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestTreeBomb: a tree that names one subtree many times over, level after level, is refused
// once it expands beyond maxTreeEntries, instead of exhausting memory.
func TestTreeBomb(t *testing.T) {
	defer func(n int) { MaxTreeEntries = n }(MaxTreeEntries)
	MaxTreeEntries = 10000
	level := []byte("rewind-tree 1 0\n")
	nodes := map[objects.Hash][]byte{}
	for range 30 {
		h := objects.Sum(level)
		nodes[h] = level
		var b []byte
		b = append(b, "rewind-tree 1 4\n"...)
		for _, n := range []string{"a", "b", "c", "d"} {
			b = append(b, "d 0755 0 "+h.String()+" "+n+"\x00\x00"...)
		}
		level = b
	}
	_, _, err := ExpandTree(level, func(h objects.Hash) ([]byte, error) { return nodes[h], nil })
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("err = %v, want a refusal of the expansion", err)
	}
}

// FuzzExpandTree: a root tree and one subtree from outside (a damaged or hostile store) never
// panic the reader, and what it accepts passes the manifest checks and re-encodes to itself.
func FuzzExpandTree(f *testing.F) {
	h, _ := objects.ParseHash(blobA)
	entries := []Entry{{Path: "a", Type: TypeDir, Mode: 0o755}, {Path: "a-b", Type: TypeFile, Size: 1, Blob: h}, {Path: "a/c", Type: TypeSymlink, Size: 1, Target: "x"}}
	tr := EncodeTrees(len(entries), func(i int) *Entry { return &entries[i] }, nil)
	for _, sub := range tr.Nodes {
		f.Add(tr.Root, sub)
	}
	f.Add([]byte("rewind-tree 1 0\n"), []byte("rewind-tree 1 0\n"))
	f.Fuzz(func(t *testing.T, root, sub []byte) {
		sh := objects.Sum(sub)
		got, _, err := ExpandTree(root, func(x objects.Hash) ([]byte, error) {
			if x != sh {
				return nil, ErrBadManifest
			}
			return sub, nil
		})
		if err != nil {
			return
		}
		if err := checkEntries(got); err != nil {
			t.Fatalf("accepted entries the manifest checks refuse: %v", err)
		}
		again := EncodeTrees(len(got), func(i int) *Entry { return &got[i] }, nil)
		if !bytes.Equal(again.Root, root) {
			t.Fatalf("accepted a root tree that does not re-encode to itself:\n%q\n%q", root, again.Root)
		}
	})
}
