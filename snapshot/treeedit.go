package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// A checkpoint at the cost of what changed (docs/watch.md): with a watcher's hint naming a few
// paths, the new manifest is the current one with those paths' entries replaced. Only the trees
// of their ancestors are read and written again (every other subtree keeps its hash), only the
// paths named are looked at and hashed, and the stat cache gets their entries in its log.
// Anything out of the ordinary (a flat manifest, a large changed folder, a stat cache that must
// be rewritten) is left to the capture of scanChanged, which loads the whole manifest and cache.

// maxEditEntries is the most entries the changed paths may hold (a changed folder counts with
// everything under it) for the trees to be edited in place: its files are all read, while the
// capture's stat cache spares the unchanged ones.
const maxEditEntries = 256

// treeEdit is the current manifest being edited: the trees read so far, by directory.
type treeEdit struct {
	s    *Store
	root *editNode
	// What the edit takes out of the manifest and puts in: the new checkpoint's counts are the
	// current one's minus out plus in.
	out, in  Counts
	looked   []walk.LiveEntry  // the entries looked at now (reported: skipped ones)
	hashed   []*walk.LiveEntry // files read, for the stat cache
	removed  []string          // files gone from the manifest, for the stat cache
	excluded []string
	nExcl    int
	written  map[Hash][]byte  // the trees made: of the changed directories and their ancestors
	taken    map[string]Entry // where modes are not all kept: what take took out, by full path
}

// editNode is one directory's tree: its entries (names; a directory's Blob is its tree's hash)
// and the subdirectories' trees read so far.
type editNode struct {
	entries []Entry
	kids    map[string]*editNode
	dirty   bool
}

// editedCheckpoint is what editTrees makes: the new manifest's trees and counts, the capture to
// report (only the paths looked at), and how to record the new files in the stat cache.
type editedCheckpoint struct {
	trees  *manifest.Trees
	counts Counts
	c      *capture
	cache  func() error
}

// tryEdit edits the current manifest by hint's paths when the hint is relative to the current
// position and names a few paths (none: the current manifest, as it is); nil when it does not
// (the caller captures).
func (s *Store) tryEdit(ctx context.Context, ign walk.Matcher, hint *Changed) (*editedCheckpoint, error) {
	if hint == nil || len(hint.Paths) > maxEditEntries {
		return nil, nil
	}
	pos, err := s.readPosition()
	if err != nil || pos.Current == "" || pos.Current != hint.Since {
		return nil, err
	}
	cur, err := s.readCheckpoint(pos.Current)
	if err != nil {
		return nil, err
	}
	top, why := outermost(hint)
	if why != "" {
		return nil, nil
	}
	ed, _, err := s.editTrees(ctx, ign, hint, cur, top)
	return ed, err
}

// editTrees edits the manifest of checkpoint cur (the current position, which hint is relative
// to) by the hint's paths. It returns nil and why when the edit is not for this hint: the
// caller then captures as usual.
func (s *Store) editTrees(ctx context.Context, ign walk.Matcher, hint *Changed, cur *Checkpoint, top []string) (*editedCheckpoint, string, error) {
	rootEntries, why, err := s.rootTree(cur)
	if rootEntries == nil {
		return nil, why, err
	}
	name := filepath.Join(s.state, "index")
	cache, why := openCache(name)
	if why != "" {
		return nil, why, nil
	}
	t := &treeEdit{s: s, root: &editNode{entries: rootEntries}, written: map[Hash][]byte{}}
	if why, err := t.lookAt(ctx, ign, top); why != "" || err != nil {
		return nil, why, err
	}
	stg := objects.NewStager(s.objects)
	for i := range t.looked {
		if e := &t.looked[i]; e.Type == TypeFile {
			if err := s.hashEntry(e, stg, new(atomic.Int64)); err != nil {
				stg.Discard()
				return nil, "", err
			}
			t.hashed = append(t.hashed, e)
		}
	}
	t.in = countEntries(t.looked)
	if err := t.put(); err != nil {
		stg.Discard()
		return nil, "", err
	}
	tr := &manifest.Trees{Root: t.encode(t.root), Nodes: t.written}
	tr.Hash = Hash(sha256.Sum256(tr.Root))
	slices.Sort(t.excluded)
	if len(t.excluded) > walk.MaxReported {
		t.excluded = t.excluded[:walk.MaxReported]
	}
	c := &capture{
		scan:   &walk.Scan{Entries: t.looked, Excluded: t.excluded, ExcludedCount: t.nExcl},
		hashed: len(t.hashed), stager: stg,
		walk: hint.walk(),
	}
	return &editedCheckpoint{trees: tr, counts: t.counts(cur.Counts), c: c, cache: func() error { return t.saveCache(name, cache) }}, "", nil
}

// rootTree returns the entries of the root tree of cur's manifest, or nil and why when the
// manifest has no trees to edit.
func (s *Store) rootTree(cur *Checkpoint) ([]Entry, string, error) {
	b, err := s.readManifestRoot(cur.Manifest)
	if err != nil {
		return nil, "", err
	}
	if !strings.HasPrefix(string(b), manifest.TreeMagic) {
		return nil, "a manifest written before trees", nil
	}
	rootEntries, err := manifest.ParseTree(b)
	if err != nil {
		return nil, "", err
	}
	return rootEntries, "", nil
}

// lookAt takes each changed path (top) out of its folder's tree and looks at what it holds now
// (t.looked, sorted; a folder's whole subtree), or says why the edit is not for these paths.
func (t *treeEdit) lookAt(ctx context.Context, ign walk.Matcher, top []string) (why string, err error) {
	s := t.s
	var seen atomic.Int64
	w := walk.NewWalker(ctx, s.root, s.stateRel, ign, &seen)
	var walked []string
	for _, p := range top {
		parent, err := t.dir(path.Dir(p))
		if err != nil {
			return "", err
		}
		if parent == nil {
			continue // its directory is gone, excluded, or not a directory: the path is not there
		}
		if why, err := t.take(parent, p); why != "" || err != nil {
			return why, err
		}
		if slices.Contains(s.stateRel, p) || excludedAncestor(ign, p) {
			continue
		}
		e, ok, err := s.entryAt(p)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if ign.Match(p, e.Type == TypeDir) {
			t.excluded = append(t.excluded, p)
			t.nExcl++
			continue
		}
		t.looked = append(t.looked, e)
		if e.Type == TypeDir {
			walked = append(walked, p)
		}
	}
	if err := w.Run(walked, 1); err != nil {
		return "", err
	}
	for _, p := range walked {
		t.looked = w.Emit(p, t.looked)
		if len(t.looked) > maxEditEntries {
			return fmt.Sprintf("the changed paths hold more than %d entries", maxEditEntries), nil
		}
	}
	t.excluded = append(t.excluded, w.Excluded...)
	t.nExcl += w.NExcl
	slices.SortFunc(t.looked, func(a, b walk.LiveEntry) int { return strings.Compare(a.Path, b.Path) })
	inheritTaken(t.looked, t.taken)
	return "", nil
}

// counts returns base, the edited checkpoint's counts, less what the edit took out and plus
// what it put in.
func (t *treeEdit) counts(base Counts) Counts {
	base.Files += t.in.Files - t.out.Files
	base.Dirs += t.in.Dirs - t.out.Dirs
	base.Symlinks += t.in.Symlinks - t.out.Symlinks
	base.Skipped += t.in.Skipped - t.out.Skipped
	base.Bytes += t.in.Bytes - t.out.Bytes
	return base
}

// dir returns the tree of directory d ("." is the root), reading the trees on its way; nil when
// the manifest has no directory d.
func (t *treeEdit) dir(d string) (*editNode, error) {
	n := t.root
	if d == "." {
		return n, nil
	}
	for name := range strings.SplitSeq(d, "/") {
		if kid := n.kids[name]; kid != nil {
			n = kid
			continue
		}
		i, ok := n.find(name)
		if !ok || n.entries[i].Type != TypeDir {
			return nil, nil
		}
		b, err := t.s.objects.ReadAll(n.entries[i].Blob)
		if err != nil {
			return nil, fmt.Errorf("tree %s of %q: %w", n.entries[i].Blob, d, err)
		}
		ents, err := manifest.ParseTree(b)
		if err != nil {
			return nil, fmt.Errorf("tree of %q: %w", d, err)
		}
		if n.kids == nil {
			n.kids = map[string]*editNode{}
		}
		kid := &editNode{entries: ents}
		n.kids[name] = kid
		n = kid
	}
	return n, nil
}

// find returns the index of the entry named name, or where it would go.
func (n *editNode) find(name string) (int, bool) {
	return slices.BinarySearchFunc(n.entries, name, func(e Entry, name string) int { return strings.Compare(e.Path, name) })
}

// take removes path p's entry from its directory's tree parent, counting what it held (a
// directory with everything under it, read from its trees).
func (t *treeEdit) take(parent *editNode, p string) (string, error) {
	i, ok := parent.find(path.Base(p))
	if !ok {
		return "", nil
	}
	e := parent.entries[i]
	parent.entries = slices.Delete(parent.entries, i, i+1)
	delete(parent.kids, e.Path)
	t.dirty(path.Dir(p))
	gone := []Entry{e}
	if e.Type == TypeDir {
		b, err := t.s.objects.ReadAll(e.Blob)
		if err != nil {
			return "", fmt.Errorf("tree %s of %q: %w", e.Blob, p, err)
		}
		under, _, err := manifest.ExpandTree(b, t.s.objects.ReadAll)
		if err != nil {
			return "", fmt.Errorf("tree of %q: %w", p, err)
		}
		if len(under) > maxEditEntries {
			return fmt.Sprintf("the changed paths held more than %d entries", maxEditEntries), nil
		}
		gone = append(gone, under...)
	}
	for j := range gone {
		if manifest.ModeBitsKept != 0o7777 { // for inheritTaken (modes.go)
			name := p
			if j > 0 {
				name = p + "/" + gone[j].Path
			}
			if t.taken == nil {
				t.taken = map[string]Entry{}
			}
			t.taken[name] = gone[j]
		}
		switch g := &gone[j]; g.Type {
		case TypeFile:
			t.out.Files++
			t.out.Bytes += g.Size
			name := p
			if j > 0 {
				name = p + "/" + g.Path
			}
			t.removed = append(t.removed, name)
		case TypeDir:
			t.out.Dirs++
		case TypeSymlink:
			t.out.Symlinks++
		case TypeSkipped:
			t.out.Skipped++
		}
	}
	return "", nil
}

// dirty marks directory d's tree and its ancestors' as changed.
func (t *treeEdit) dirty(d string) {
	n := t.root
	n.dirty = true
	if d == "." {
		return
	}
	for name := range strings.SplitSeq(d, "/") {
		n = n.kids[name]
		n.dirty = true
	}
}

// put adds the entries looked at: each top one to its directory's tree, a changed directory's
// contents as trees of their own.
func (t *treeEdit) put() error {
	byDir := map[string][]int{} // the looked-at entries under each changed directory
	var tops []int
	for i := range t.looked {
		p := t.looked[i].Path
		top := -1
		for j := len(tops) - 1; j >= 0; j-- {
			if q := t.looked[tops[j]].Path; strings.HasPrefix(p, q+"/") {
				top = tops[j]
				break
			}
		}
		if top < 0 {
			tops = append(tops, i)
			continue
		}
		byDir[t.looked[top].Path] = append(byDir[t.looked[top].Path], i)
	}
	for _, i := range tops {
		e := t.looked[i].Entry
		parent, err := t.dir(path.Dir(e.Path))
		if err != nil {
			return err
		}
		if parent == nil { // cannot happen: the path was looked at because its directory is there
			return fmt.Errorf("the tree of %q is missing", path.Dir(e.Path))
		}
		if e.Type == TypeDir {
			under := byDir[e.Path]
			skip := len(e.Path) + 1
			sub := manifest.EncodeTrees(len(under), func(k int) *Entry {
				x := t.looked[under[k]].Entry
				x.Path = x.Path[skip:]
				return &x
			}, nil)
			e.Blob = sub.Hash
			t.written[sub.Hash] = sub.Root
			for h, b := range sub.Nodes {
				t.written[h] = b
			}
		}
		e.Path = path.Base(e.Path)
		j, _ := parent.find(e.Path)
		parent.entries = slices.Insert(parent.entries, j, e)
		t.dirty(path.Dir(t.looked[i].Path))
	}
	return nil
}

// encode returns the tree of n, after encoding its changed subdirectories' trees (kept in
// t.written) and naming them by their new hashes.
func (t *treeEdit) encode(n *editNode) []byte {
	for i := range n.entries {
		if e := &n.entries[i]; e.Type == TypeDir {
			if kid := n.kids[e.Path]; kid != nil && kid.dirty {
				b := t.encode(kid)
				e.Blob = Hash(sha256.Sum256(b))
				t.written[e.Blob] = b
			}
		}
	}
	b := append([]byte(manifest.TreeMagic), strconv.Itoa(len(n.entries))...)
	b = append(b, '\n')
	for i := range n.entries {
		e := &n.entries[i]
		var blob *Hash
		if e.Type == TypeFile || e.Type == TypeDir {
			blob = &e.Blob
		}
		b = manifest.AppendEntry(b, e, e.Path, blob)
	}
	return b
}

// cacheTail is what the edit needs of the stat cache to append to its log without reading it:
// the index's checksum and size, and the log's size.
type cacheTail struct {
	base          uint32
	size, logSize int64
}

// openCache reads the stat cache's tail. why is set when its log is due to be folded into a
// rewritten index (which needs the whole cache: the capture does it), or there is no index.
func openCache(name string) (cacheTail, string) {
	f, err := os.Open(name)
	if err != nil {
		return cacheTail{}, "no stat cache to add to"
	}
	defer f.Close()
	var c cacheTail
	st, err := f.Stat()
	if err != nil || st.Size() < 4 {
		return c, "no stat cache to add to"
	}
	var b [4]byte
	if _, err := f.ReadAt(b[:], st.Size()-4); err != nil {
		return c, "no stat cache to add to"
	}
	c.base, c.size = binary.LittleEndian.Uint32(b[:]), st.Size()
	if lst, err := os.Lstat(statcache.LogName(name)); err == nil {
		c.logSize = lst.Size()
	}
	if c.logSize > max(c.size/4, 64<<10)-16<<10 {
		return c, "the stat cache's log is due to be folded into it"
	}
	return c, ""
}

// saveCache appends the files read to the stat cache's log, and removes the files gone.
func (t *treeEdit) saveCache(name string, c cacheTail) error {
	var set []statcache.Entry
	now := map[string]bool{}
	for _, e := range t.hashed {
		if e.Type == TypeFile {
			set = append(set, statcache.Entry{Path: e.Path, St: e.St, Blob: e.Blob})
			now[e.Path] = true
		}
	}
	// The files gone, and the cached trees (treecache.go) of every folder above what changed:
	// a content change keeps a folder's stat, so a later walk would reuse the tree of before.
	gone := map[string]bool{}
	for _, p := range t.removed {
		manifest.MarkUp(gone, p)
	}
	for i := range t.looked {
		manifest.MarkUp(gone, t.looked[i].Path)
	}
	var removed []string
	for p := range gone {
		if !now[p] {
			removed = append(removed, p)
		}
	}
	slices.Sort(removed)
	if len(set)+len(removed) == 0 {
		return nil
	}
	if err := statcache.AppendLog(name, c.base, statcache.EncodeLogRecord(set, removed)); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}
