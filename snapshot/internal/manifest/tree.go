package manifest

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

// TreeMagic starts every tree (FORMAT.md, "Manifests"); the number is the tree format version.
const TreeMagic = "rewind-tree 1 "

// MaxTreeEntries bounds the paths one manifest may expand to. Trees are addressed by hash, so a
// hostile store could name one subtree many times over and expand a few bytes into billions of
// entries (identical directories do share a tree, so naming one many times is not itself
// wrong); four million paths is far beyond any workspace a checkpoint is meant for. A variable
// for tests.
var MaxTreeEntries = 1 << 22

// A checkpoint's manifest is a tree of directory listings, each addressed by the SHA-256 of its
// bytes, as git's trees and restic's are: a checkpoint after a change writes the listings of the
// changed directories and of their ancestors, and shares every other one with the checkpoints
// before it. The root listing is the manifest file (manifests/<hash>); the others are stored as
// objects, in one pack per checkpoint.

// Trees is a workspace's manifest encoded as trees: the root's bytes and every subdirectory's.
type Trees struct {
	Root  []byte
	Hash  objects.Hash            // sha256 of root
	Nodes map[objects.Hash][]byte // every encoded subdirectory's tree
	Dirs  map[string]objects.Hash // every directory's tree hash, by path ("" for the root)
	// Reused are the trees taken from the cache whose parent was encoded (a reused tree's
	// subtrees are stored whenever it is): the caller checks that they are stored. Root is nil
	// when the root's tree was reused.
	Reused []objects.Hash
}

// EncodeTrees encodes entries (sorted by path, valid as a manifest) as trees. reuse gives the
// hash of the tree of directories known unchanged (the snapshot package's treecache.go; nil: none): they are not
// encoded, nor is anything under them.
func EncodeTrees(n int, at func(int) *Entry, reuse map[string]objects.Hash) *Trees {
	// Every reused tree holds, nested or not: they are all the directories' trees.
	t := &Trees{Nodes: map[objects.Hash][]byte{}, Dirs: make(map[string]objects.Hash, len(reuse)+16)}
	for p, h := range reuse {
		t.Dirs[p] = h
	}
	if h, ok := reuse[""]; ok {
		t.Hash = h
		return t
	}
	// The direct children of a directory are in name order in the sorted list (they share the
	// directory's prefix), so grouping by parent keeps each group sorted. Entries under a reused
	// directory are not needed.
	children := map[string][]int{}
	for i := range n {
		parent := ParentDir(at(i).Path)
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
		b := make([]byte, 0, len(TreeMagic)+12+len(kids)*120)
		b = append(b, TreeMagic...)
		b = strconv.AppendInt(b, int64(len(kids)), 10)
		b = append(b, '\n')
		for _, i := range kids {
			e := at(i)
			name := e.Path[strings.LastIndexByte(e.Path, '/')+1:]
			var blob *objects.Hash
			switch e.Type {
			case TypeFile:
				blob = &e.Blob
			case TypeDir:
				h, ok := reuse[e.Path]
				if ok {
					t.Reused = append(t.Reused, h)
				} else {
					sub := encode(e.Path)
					h = objects.Hash(sha256.Sum256(sub))
					t.Nodes[h] = sub
					t.Dirs[e.Path] = h
				}
				blob = &h
			}
			b = AppendEntry(b, e, name, blob)
		}
		return b
	}
	t.Root = encode("")
	t.Hash = objects.Hash(sha256.Sum256(t.Root))
	t.Dirs[""] = t.Hash
	return t
}

// AppendEntry appends one manifest or tree entry: e under the given path (a full path in a flat
// manifest, a name in a tree) with blob (nil: "-").
func AppendEntry(b []byte, e *Entry, path string, blob *objects.Hash) []byte {
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

// ParseTree decodes one tree: its entries, whose Path is a single name, and for a directory
// its Blob is the hash of its own tree. It never panics on any input.
func ParseTree(data []byte) ([]Entry, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.HasPrefix(data[:nl], []byte(TreeMagic)) {
		return nil, &ManifestError{Entry: -1, Reason: fmt.Sprintf("does not start with %q", TreeMagic+"<count>")}
	}
	count, ok := objects.ParseCanonicalInt(string(data[len(TreeMagic):nl]))
	if !ok {
		return nil, &ManifestError{Entry: -1, Reason: fmt.Sprintf("count %q is not a canonical decimal", data[len(TreeMagic):nl])}
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
		if err := CheckPath(e.Path); err != nil || strings.IndexByte(e.Path, '/') >= 0 {
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

// TreeSource reads the subdirectories' trees: the object store, or a map in tests.
type TreeSource func(h objects.Hash) ([]byte, error)

// ExpandTree turns a root tree into the manifest's entries, sorted by path, reading every
// subdirectory's tree from src. It returns the subtrees' hashes too (what GC must keep). The
// result passes the same checks as a flat manifest (checkEntries).
func ExpandTree(root []byte, src TreeSource) ([]Entry, []objects.Hash, error) {
	return ExpandTreeKnown(root, src, nil)
}

// KnownTree returns the entries under the directory dir (full paths, sorted) when its tree is
// known to be h without reading it (a restore knows the live workspace's trees), or false.
type KnownTree func(dir string, h objects.Hash) ([]Entry, bool)

// ExpandTreeKnown is expandTree that takes the entries of the subtrees known gives instead of
// reading them (their hashes are not returned: only GC needs them, and it reads every tree).
func ExpandTreeKnown(root []byte, src TreeSource, known KnownTree) ([]Entry, []objects.Hash, error) {
	var out []Entry
	var subtrees []objects.Hash
	var expand func(prefix string, data []byte) error
	expand = func(prefix string, data []byte) error {
		kids, err := ParseTree(data)
		if err != nil {
			if prefix != "" {
				return fmt.Errorf("tree of %q: %w", strings.TrimSuffix(prefix, "/"), err)
			}
			return err
		}
		if len(out)+len(kids) > MaxTreeEntries {
			return &ManifestError{Entry: -1, Reason: fmt.Sprintf("expands to more than %d entries", MaxTreeEntries)}
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
			if len(path) > MaxPathLen {
				return &ManifestError{Entry: -1, Path: path[:64] + "…", Reason: fmt.Sprintf("path longer than %d bytes", MaxPathLen)}
			}
			if !it.sub {
				e.Path = path
				if e.Type == TypeDir {
					e.Blob = objects.Hash{} // a manifest entry of a directory has no blob
				}
				out = append(out, e)
				continue
			}
			if known != nil {
				if kids, ok := known(path, e.Blob); ok {
					if len(out)+len(kids) > MaxTreeEntries {
						return &ManifestError{Entry: -1, Reason: fmt.Sprintf("expands to more than %d entries", MaxTreeEntries)}
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
