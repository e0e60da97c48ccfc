package snapshot

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// writeIndex saves the stat cache of a capture when it changed: the changed entries appended to
// the log when the capture's cache had an index made under the same rules and the log stays
// under a quarter of it, else a new index.
func (s *Store) writeIndex(c *capture) error {
	if !c.indexDirty {
		return nil
	}
	old := c.index
	if old == nil || old.Base == 0 || old.LogTorn || c.distrusted || old.Rules != c.rules {
		return s.saveIndex(c.indexEntries(), c.rules)
	}
	// Compared as both stream by, in place: a log record of a few changes does not need the
	// whole cache built, old or new (2 MB each for 20,000 files).
	set, removed := statcache.Changes(old.Cursor(), c.eachIndexEntry)
	if len(set) == 0 && len(removed) == 0 {
		return nil
	}
	body := statcache.EncodeLogRecord(set, removed)
	if int64(old.LogSize+len(body)) > max(old.Size/4, 64<<10) {
		return s.saveIndex(c.indexEntries(), c.rules)
	}
	if err := statcache.AppendLog(filepath.Join(s.state, "index"), old.Base, body); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}

// indexEntries returns the stat cache a capture leaves (eachIndexEntry), sorted.
func (c *capture) indexEntries() []statcache.Entry {
	return slices.AppendSeq(make([]statcache.Entry, 0, len(c.scan.Entries)+1), c.eachIndexEntry)
}

// eachIndexEntry yields the stat cache a capture leaves, in order: its files, and, when its trees
// were encoded under rules with a key, its directories with their trees (treecache.go).
func (c *capture) eachIndexEntry(yield func(statcache.Entry) bool) {
	dirs := c.trees != nil && c.rulesOK && c.rootSt.Mode != 0 // a full walk's, see captureLiveRules
	if h, ok := c.trees[""]; ok && dirs && c.rootSt.Mode != 0 {
		if !yield(statcache.Entry{Path: "", St: c.rootSt, Blob: h}) {
			return
		}
	}
	for i := range c.scan.Entries {
		switch e := &c.scan.Entries[i]; e.Type {
		case TypeFile:
			if !yield(statcache.Entry{Path: e.Path, St: e.St, Blob: e.Blob}) {
				return
			}
		case TypeDir:
			if h, ok := c.trees[e.Path]; ok && dirs && e.St.Mode != 0 {
				if !yield(statcache.Entry{Path: e.Path, St: e.St, Blob: h}) {
					return
				}
			}
		}
	}
}

// saveIndex writes a new index of entries, whose directories' trees were made under the rules
// whose key is rules, and removes the log of the one it replaces.
func (s *Store) saveIndex(entries []statcache.Entry, rules Hash) error {
	name := filepath.Join(s.state, "index")
	if err := durable.WriteFileUnsynced(name, statcache.Encode(entries, rules), 0o600); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	// A crash before the log goes leaves a log naming the old index's checksum: ignored.
	if err := statcache.RemoveLog(name); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}
