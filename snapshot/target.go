package snapshot

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// target is a checkpoint loaded for a restore: metadata, verified manifest and its ignore rules.
type target struct {
	meta    *Checkpoint
	entries []Entry
	ignore  *Ignore
	// shared are the folders whose tree equals the live capture's (loadTargetLive), in the order
	// of their contents' paths: entries lists the folders but not what is in them, which is the
	// live workspace's, so a restore has nothing to do there.
	shared []string
}

// loadTarget reads everything a restore to id needs and refuses a manifest that could make the
// restore touch the state directory; nothing in the workspace is touched before this succeeds.
func (s *Store) loadTarget(id string) (*target, error) {
	return s.loadTargetLive(id, nil)
}

// loadTargetLive is loadTarget that neither reads nor lists the contents of the target's folders
// whose tree equals the live workspace's as the capture c encoded it (its safety checkpoint's):
// those are t.shared. A rewind of a few changes then reads, and compares, the trees of the
// changed folders and their ancestors, not the whole manifest. The folders in the state
// directory's way and the root's .rewindignore are always listed: a shared folder holds neither
// (the capture never lists the state directory).
func (s *Store) loadTargetLive(id string, c *capture) (*target, error) {
	meta, err := s.readCheckpoint(id)
	if err != nil {
		return nil, err
	}
	t := &target{meta: meta}
	var known manifest.KnownTree
	if c != nil && c.trees != nil {
		known = func(dir string, h Hash) ([]Entry, bool) {
			if got, ok := c.trees[dir]; !ok || got != h {
				return nil, false
			}
			t.shared = append(t.shared, dir)
			return nil, true
		}
	}
	entries, _, err := s.readManifestKnown(meta.Manifest, known)
	if err != nil {
		return nil, err
	}
	if err := s.checkStateDir(entries); err != nil {
		return nil, err
	}
	t.entries = entries
	if t.ignore, err = s.ignoreOf(entries); err != nil {
		return nil, err
	}
	return t, nil
}

// checkStateDir refuses entries inside the state directory, or a non-directory on its way.
func (s *Store) checkStateDir(entries []Entry) error {
	for _, sr := range s.stateRel {
		for i := range entries {
			p := entries[i].Path
			if p == sr || strings.HasPrefix(p, sr+"/") {
				return &ManifestError{Entry: i, Path: p, Reason: fmt.Sprintf("inside the state directory %s, which a restore never touches", sr)}
			}
			if strings.HasPrefix(sr, p+"/") && entries[i].Type != TypeDir {
				return &ManifestError{Entry: i, Path: p, Reason: fmt.Sprintf("a %s on the way to the state directory %s", entries[i].Type, sr)}
			}
		}
	}
	return nil
}

// ignoreOf returns the .rewindignore rules stored in a manifest, or nil.
func (s *Store) ignoreOf(entries []Entry) (*Ignore, error) {
	for i := range entries {
		if entries[i].Path == IgnoreFile && entries[i].Type == TypeFile {
			r, err := s.objects.Open(entries[i].Blob)
			if err != nil {
				return nil, err
			}
			defer r.Close()
			b, err := io.ReadAll(io.LimitReader(r, 1<<20))
			if err != nil {
				return nil, err
			}
			return ParseIgnore(b), nil
		}
	}
	return nil, nil
}

// allEntries returns every entry of t: its own, with the shared folders' contents taken from the
// live capture c they equal.
func (s *Store) allEntries(t *target, c *capture) ([]Entry, error) {
	if len(t.shared) == 0 {
		return t.entries, nil
	}
	entries, _, err := s.readManifestKnown(t.meta.Manifest, c.liveSubtree)
	return entries, err
}

// entriesExcept returns the capture's entries but for the contents of the folders shared (as
// target.shared: in the order of their contents' paths), which a restore compares with nothing.
func (c *capture) entriesExcept(shared []string) []Entry {
	live := c.scan.Entries
	n := len(live)
	for _, d := range shared {
		lo, hi := c.contents(d)
		n -= hi - lo
	}
	out := make([]Entry, 0, n)
	i := 0
	for _, d := range shared {
		lo, hi := c.contents(d)
		for ; i < lo; i++ {
			out = append(out, live[i].Entry)
		}
		i = max(i, hi)
	}
	for ; i < len(live); i++ {
		out = append(out, live[i].Entry)
	}
	return out
}

// contents returns the range of the capture's entries under folder d.
func (c *capture) contents(d string) (lo, hi int) {
	live := c.scan.Entries
	at := func(p string) int {
		i, _ := slices.BinarySearchFunc(live, p, func(e walk.LiveEntry, p string) int { return strings.Compare(e.Path, p) })
		return i
	}
	return at(d + "/"), at(d + "0") // '0' follows '/': every path under d sorts between the two
}

// entry returns the capture's entry of p.
func (c *capture) entry(p string) (*walk.LiveEntry, bool) {
	es := c.scan.Entries
	i, ok := slices.BinarySearchFunc(es, p, func(e walk.LiveEntry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return nil, false
	}
	return &es[i], true
}

// seen returns what a restore checks a live path against before it replaces or deletes it
// (restore.Options.Seen): the stat the capture c recorded. A capture narrowed by a watcher's
// hint (scanChanged) has none for the folders and symlinks the watcher vouched for as unchanged
// (they come from the position's manifest): each is looked at now, and its present stat given
// while it still is what c holds (a folder; a symlink with c's target), which is all a restore
// must know to lose nothing. Safe for concurrent use: it changes nothing.
func (s *Store) seen(c *capture) func(p string) (platform.Stat, bool) {
	return func(p string) (platform.Stat, bool) {
		e, ok := c.entry(p)
		if !ok {
			return platform.Stat{}, false
		}
		if e.St != (platform.Stat{}) || (e.Type != TypeDir && e.Type != TypeSymlink) {
			return e.St, true
		}
		now, ok, err := s.entryAt(p)
		if err != nil || !ok || now.Type != e.Type || now.Target != e.Target {
			return platform.Stat{}, false
		}
		return now.St, true
	}
}
