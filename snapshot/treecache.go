package snapshot

import (
	"crypto/sha256"
	"slices"
	"strings"
	"syscall"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// The tree cache: the stat cache also remembers, for each directory, the lstat it had and the
// hash of its tree when a checkpoint encoded it (FORMAT.md, "Index"), as git's cache-tree and
// untracked cache do. A directory's tree lists its children's names, types, modes, sizes, link
// targets and contents; adding, removing or renaming a child changes the directory's mtime and
// ctime, and every other change shows in the child's own stat. So a directory whose lstat is the
// cached one (and not racily clean), whose files the stat cache vouches for, and whose
// subdirectories are in turn unchanged, has the cached tree: a checkpoint of an unchanged
// workspace encodes and hashes nothing, and one after a few changes only the trees of the changed
// directories and their ancestors.
//
// The exclusion rules decide which children a tree lists without touching any stat, so the
// cached trees hold only under the rules they were made with: the index names them by a key.

// ruleKey returns the key of the exclusion rules m, and false for rules it cannot name (their
// directory hashes are then neither reused nor recorded).
func ruleKey(m walk.Matcher) (Hash, bool) {
	switch r := m.(type) {
	case nil:
		return (*Ignore)(nil).Key(), true
	case *Ignore:
		return r.Key(), true
	case walk.Rules:
		h := sha256.New()
		h.Write([]byte("rules\n"))
		for _, m := range r {
			k := m.Key()
			h.Write(k[:])
		}
		return Hash(h.Sum(nil)), true
	}
	return Hash{}, false
}

// reusableTrees returns the directories (by path, "" for the root) whose cached tree still holds,
// with that tree's hash: those whose own stat matched the cache (c.dirTrees) and under which
// nothing changed. Every other directory's tree must be encoded.
func (c *capture) reusableTrees() map[string]Hash {
	if c.distrusted || len(c.dirTrees) == 0 {
		return nil
	}
	bad := map[string]bool{}
	if _, ok := c.dirTrees[""]; !ok {
		manifest.MarkUp(bad, "")
	}
	for i := range c.scan.Entries {
		e := &c.scan.Entries[i]
		switch e.Type {
		case TypeFile:
			if !e.Cached {
				manifest.MarkUp(bad, manifest.ParentDir(e.Path))
			}
		case TypeDir:
			if _, ok := c.dirTrees[e.Path]; !ok {
				manifest.MarkUp(bad, e.Path)
			}
		case TypeSkipped:
			// A regular file that kept changing while it was read: not vouched for.
			if e.St.Mode&syscall.S_IFMT == syscall.S_IFREG {
				manifest.MarkUp(bad, manifest.ParentDir(e.Path))
			}
		}
	}
	out := make(map[string]Hash, len(c.dirTrees))
	for p, h := range c.dirTrees {
		if !bad[p] {
			out[p] = h
		}
	}
	return out
}

// liveSubtree returns the captured entries under dir when the capture's tree of dir is h (see
// loadTargetLive): equal trees list equal entries.
func (c *capture) liveSubtree(dir string, h Hash) ([]Entry, bool) {
	if got, ok := c.trees[dir]; !ok || got != h {
		return nil, false
	}
	live := c.scan.Entries
	prefix := dir + "/"
	i, _ := slices.BinarySearchFunc(live, prefix, func(e walk.LiveEntry, p string) int { return strings.Compare(e.Path, p) })
	var out []Entry
	for ; i < len(live) && strings.HasPrefix(live[i].Path, prefix); i++ {
		e := live[i].Entry
		e.Blob = Hash{}
		if e.Type == TypeFile {
			e.Blob = live[i].Blob
		}
		out = append(out, e)
	}
	return out, true
}
