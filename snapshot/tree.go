package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// treeMagic starts every tree (FORMAT.md, "Manifests"); the number is the tree format version.
const treeMagic = "rewind-tree 1 "

// maxTreeEntries bounds the paths one manifest may expand to. Trees are addressed by hash, so a
// hostile store could name one subtree many times over and expand a few bytes into billions of
// entries (identical directories do share a tree, so naming one many times is not itself
// wrong); four million paths is far beyond any workspace a checkpoint is meant for. A variable
// for tests.
var maxTreeEntries = 1 << 22

// A checkpoint's manifest is a tree of directory listings, each addressed by the SHA-256 of its
// bytes, as git's trees and restic's are: a checkpoint after a change writes the listings of the
// changed directories and of their ancestors, and shares every other one with the checkpoints
// before it. The root listing is the manifest file (manifests/<hash>); the others are stored as
// objects, in one pack per checkpoint.

// trees is a workspace's manifest encoded as trees: the root's bytes and every subdirectory's.
type trees struct {
	root  []byte
	hash  Hash            // sha256 of root
	nodes map[Hash][]byte // every encoded subdirectory's tree
	dirs  map[string]Hash // every directory's tree hash, by path ("" for the root)
	// reused are the trees taken from the cache whose parent was encoded (a reused tree's
	// subtrees are stored whenever it is): the caller checks that they are stored. root is nil
	// when the root's tree was reused.
	reused []Hash
}

// encodeTrees encodes entries (sorted by path, valid as a manifest) as trees. reuse gives the
// hash of the tree of directories known unchanged (treecache.go; nil: none): they are not
// encoded, nor is anything under them.
func encodeTrees(n int, at func(int) *Entry, reuse map[string]Hash) *trees {
	// Every reused tree holds, nested or not: they are all the directories' trees.
	t := &trees{nodes: map[Hash][]byte{}, dirs: make(map[string]Hash, len(reuse)+16)}
	for p, h := range reuse {
		t.dirs[p] = h
	}
	if h, ok := reuse[""]; ok {
		t.hash = h
		return t
	}
	// The direct children of a directory are in name order in the sorted list (they share the
	// directory's prefix), so grouping by parent keeps each group sorted. Entries under a reused
	// directory are not needed.
	children := map[string][]int{}
	for i := range n {
		parent := parentDir(at(i).Path)
		if reuse != nil {
			if _, ok := reuse[parent]; ok {
				continue
			}
		}
		children[parent] = append(children[parent], i)
	}
	var encode func(dir string) []byte
	encode = func(dir string) []byte {
		kids := children[dir]
		b := make([]byte, 0, len(treeMagic)+12+len(kids)*120)
		b = append(b, treeMagic...)
		b = strconv.AppendInt(b, int64(len(kids)), 10)
		b = append(b, '\n')
		for _, i := range kids {
			e := at(i)
			name := e.Path[strings.LastIndexByte(e.Path, '/')+1:]
			var blob *Hash
			switch e.Type {
			case TypeFile:
				blob = &e.Blob
			case TypeDir:
				h, ok := reuse[e.Path]
				if ok {
					t.reused = append(t.reused, h)
				} else {
					sub := encode(e.Path)
					h = Hash(sha256.Sum256(sub))
					t.nodes[h] = sub
					t.dirs[e.Path] = h
				}
				blob = &h
			}
			b = appendEntry(b, e, name, blob)
		}
		return b
	}
	t.root = encode("")
	t.hash = Hash(sha256.Sum256(t.root))
	t.dirs[""] = t.hash
	return t
}

// appendEntry appends one manifest or tree entry: e under the given path (a full path in a flat
// manifest, a name in a tree) with blob (nil: "-").
func appendEntry(b []byte, e *Entry, path string, blob *Hash) []byte {
	b = append(b, byte(e.Type), ' ')
	b = appendOctal4(b, e.Mode)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, ' ')
	if blob != nil {
		b = hex.AppendEncode(b, blob[:])
	} else {
		b = append(b, '-')
	}
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, 0)
	switch e.Type {
	case TypeSymlink:
		b = append(b, e.Target...)
	case TypeSkipped:
		b = append(b, e.Reason...)
	}
	return append(b, 0)
}

// parseTree decodes one tree: its entries, whose Path is a single name, and for a directory
// its Blob is the hash of its own tree. It never panics on any input.
func parseTree(data []byte) ([]Entry, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.HasPrefix(data[:nl], []byte(treeMagic)) {
		return nil, &ManifestError{Entry: -1, Reason: fmt.Sprintf("does not start with %q", treeMagic+"<count>")}
	}
	count, ok := objects.ParseCanonicalInt(string(data[len(treeMagic):nl]))
	if !ok {
		return nil, &ManifestError{Entry: -1, Reason: fmt.Sprintf("count %q is not a canonical decimal", data[len(treeMagic):nl])}
	}
	if count > int64(len(data)-nl)/12 {
		return nil, &ManifestError{Entry: -1, Reason: fmt.Sprintf("count %d exceeds what %d bytes can hold", count, len(data))}
	}
	entries := make([]Entry, 0, count)
	rest := string(data[nl+1:])
	for i := 0; int64(i) < count; i++ {
		e, n, err := parseEntryOf(rest, true)
		if err != nil {
			return nil, &ManifestError{Entry: i, Path: e.Path, Reason: err.Error()}
		}
		rest = rest[n:]
		if err := checkPath(e.Path); err != nil || strings.IndexByte(e.Path, '/') >= 0 {
			return nil, &ManifestError{Entry: i, Path: e.Path, Reason: "a tree entry's name is one path segment"}
		}
		if i > 0 && entries[i-1].Path >= e.Path {
			return nil, &ManifestError{Entry: i, Path: e.Path, Reason: fmt.Sprintf("not sorted or duplicate: follows %q", entries[i-1].Path)}
		}
		entries = append(entries, e)
	}
	if len(rest) != 0 {
		return nil, &ManifestError{Entry: int(count), Reason: fmt.Sprintf("%d bytes after the last entry", len(rest))}
	}
	return entries, nil
}

// treeSource reads the subdirectories' trees: the object store, or a map in tests.
type treeSource func(h Hash) ([]byte, error)

// expandTree turns a root tree into the manifest's entries, sorted by path, reading every
// subdirectory's tree from src. It returns the subtrees' hashes too (what GC must keep). The
// result passes the same checks as a flat manifest (checkEntries).
func expandTree(root []byte, src treeSource) ([]Entry, []Hash, error) {
	return expandTreeKnown(root, src, nil)
}

// knownTree returns the entries under the directory dir (full paths, sorted) when its tree is
// known to be h without reading it (a restore knows the live workspace's trees), or false.
type knownTree func(dir string, h Hash) ([]Entry, bool)

// expandTreeKnown is expandTree that takes the entries of the subtrees known gives instead of
// reading them (their hashes are not returned: only GC needs them, and it reads every tree).
func expandTreeKnown(root []byte, src treeSource, known knownTree) ([]Entry, []Hash, error) {
	var out []Entry
	var subtrees []Hash
	var expand func(prefix string, data []byte) error
	expand = func(prefix string, data []byte) error {
		kids, err := parseTree(data)
		if err != nil {
			if prefix != "" {
				return fmt.Errorf("tree of %q: %w", strings.TrimSuffix(prefix, "/"), err)
			}
			return err
		}
		if len(out)+len(kids) > maxTreeEntries {
			return &ManifestError{Entry: -1, Reason: fmt.Sprintf("expands to more than %d entries", maxTreeEntries)}
		}
		// Emit in full-path order: within a directory an entry sorts by its name and everything
		// under a subdirectory by the name followed by "/" (see walker.emit).
		type item struct {
			key string
			i   int
			sub bool
		}
		items := make([]item, 0, len(kids)+len(kids)/4)
		for i := range kids {
			items = append(items, item{key: kids[i].Path, i: i})
			if kids[i].Type == TypeDir {
				items = append(items, item{key: kids[i].Path + "/", i: i, sub: true})
			}
		}
		slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.key, b.key) })
		for _, it := range items {
			e := kids[it.i]
			path := prefix + e.Path
			if len(path) > maxPathLen {
				return &ManifestError{Entry: -1, Path: path[:64] + "…", Reason: fmt.Sprintf("path longer than %d bytes", maxPathLen)}
			}
			if !it.sub {
				e.Path = path
				if e.Type == TypeDir {
					e.Blob = Hash{} // a manifest entry of a directory has no blob
				}
				out = append(out, e)
				continue
			}
			if known != nil {
				if kids, ok := known(path, e.Blob); ok {
					if len(out)+len(kids) > maxTreeEntries {
						return &ManifestError{Entry: -1, Reason: fmt.Sprintf("expands to more than %d entries", maxTreeEntries)}
					}
					out = append(out, kids...)
					continue
				}
			}
			b, err := src(e.Blob)
			if err != nil {
				return fmt.Errorf("tree %s of %q: %w", e.Blob, path, err)
			}
			subtrees = append(subtrees, e.Blob)
			if err := expand(path+"/", b); err != nil {
				return err
			}
		}
		return nil
	}
	if err := expand("", root); err != nil {
		return nil, nil, err
	}
	if err := checkEntries(out); err != nil {
		return nil, nil, err
	}
	return out, subtrees, nil
}
