package upkeep

import (
	"fmt"
	"path/filepath"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// Hash names a stored object, manifest or tree.
type Hash = objects.Hash

// Live is what a sweep keeps (the mark of mark-and-sweep): the manifests of the kept
// checkpoints, and every object that they or the stat cache need (contents, trees, chunks).
// The snapshot layer, which alone reads checkpoints and decides which are kept, fills Manifests
// and Objects from their manifests; MarkStatCache and MarkChunks add the rest.
type Live struct {
	Manifests map[Hash]bool
	Objects   map[Hash]bool
}

// NewLive returns an empty Live.
func NewLive() *Live { return &Live{Manifests: map[Hash]bool{}, Objects: map[Hash]bool{}} }

// MarkStatCache adds the contents the stat cache's file entries name, and reports whether a
// directory's entry vouches for a tree that nothing kept holds (stale): such an entry must go
// from the cache (idx.Settled(l.Keeps)) before what it names is removed, since an entry vouches
// for its tree and everything under it.
func (l *Live) MarkStatCache(idx *statcache.Index) (stale bool) {
	for i := range idx.Entries {
		if e := &idx.Entries[i]; !statcache.IsDir(e) {
			l.Objects[e.Blob] = true
		} else if !l.treeKept(e) {
			stale = true
		}
	}
	return stale
}

// Keeps reports whether the stat cache entry e stays: a file's always (its content is marked),
// a directory's when the tree it names is kept.
func (l *Live) Keeps(e *statcache.Entry) bool { return !statcache.IsDir(e) || l.treeKept(e) }

// treeKept reports whether the tree a directory entry of the stat cache names is kept: the
// root's as a manifest, another's as an object (with every tree and content under it, since the
// kept checkpoints' trees are kept whole).
func (l *Live) treeKept(e *statcache.Entry) bool {
	if e.Path == "" {
		return l.Manifests[e.Blob]
	}
	return l.Objects[e.Blob]
}

// MarkChunks adds the chunks of every kept content stored in chunks. A kept chunk list that
// cannot be read fails before anything is removed: which chunks it needs is unknown.
func (l *Live) MarkChunks(o *objects.Store) error {
	names, err := platform.ReadDirNames(filepath.Dir(o.ListPath(Hash{})))
	if err != nil {
		return err
	}
	for _, n := range names {
		h, err := objects.ParseHash(n)
		if err != nil || !l.Objects[h] {
			continue
		}
		chunks, _, err := o.ReadChunkList(h)
		if err != nil {
			return fmt.Errorf("gc: %w (nothing was removed; agent-rewind check names the file that needs it, check --repair stores it again from the workspace if a file there still has it)", err)
		}
		for _, c := range chunks {
			l.Objects[c.Hash] = true
		}
	}
	return nil
}
