package snapshot

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/agent-rewind/rewind/snapshot/internal/restore"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// Kept is a path a restore left alone, and why.
type Kept = restore.Kept

// apply carries out p against the live state c (restore.Apply, with the store's contents,
// progress and parallelism). It returns the paths it changed and what it had to leave alone.
func (s *Store) apply(ctx context.Context, p *restore.Plan, c *capture) (touched map[string]bool, kept []Kept, err error) {
	var done atomic.Int64
	stop := s.progress("restore", func() Progress { return Progress{Done: done.Load(), Total: int64(len(p.Changes))} })
	defer stop()
	return restore.Apply(ctx, p, restore.Options{Root: s.root, Source: s.objects, Seen: s.seen(c), Parallelism: s.opts.Parallelism, Done: &done, BeforeApply: s.beforeApply})
}

// refreshIndex brings the stat cache up to date after a restore. What the cache held before is
// still true of every path the restore did not touch (an entry is a fact about a stat, and those
// stats did not change), so it only appends one record to the cache's log (statcache/log.go): the
// files the restore wrote, with a fresh lstat and the target's content, and the removal of every
// other path it touched and of the cached trees of the directories above them. It rebuilds the
// whole cache instead when there is no index to add to, when the log is due to be folded, or when
// the restore changed the exclusion rules (which the cached trees were made under).
func (s *Store) refreshIndex(c *capture, t *target, touched map[string]bool) error {
	if len(touched) == 0 {
		return nil
	}
	name := filepath.Join(s.state, "index")
	tail, why := openCache(name)
	if why != "" || touched[IgnoreFile] {
		return s.rebuildIndex(c, t, touched)
	}
	set, removed := restore.IndexChanges(s.root, t.entries, touched)
	body := statcache.EncodeLogRecord(set, removed)
	if tail.logSize+int64(len(body)) > max(tail.size/4, 64<<10) {
		return s.rebuildIndex(c, t, touched)
	}
	if err := statcache.AppendLog(name, tail.base, body); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}

// rebuildIndex writes a new stat cache after a restore: the target's files, with the stat seen in
// the live capture c for files left alone and a fresh lstat for files the restore wrote. A target
// file the restore left alone (excluded) is cached only if the live file has its content. The
// trees c encoded (a safety checkpoint's) stay cached for the directories under which the restore
// touched nothing: their stat and content are what c saw (treecache.go).
func (s *Store) rebuildIndex(c *capture, t *target, touched map[string]bool) error {
	want, err := s.allEntries(t, c)
	if err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	trees := c.trees
	if !c.rulesOK {
		trees = nil // made under other rules: none stays cached
	}
	out, keptTrees := restore.IndexEntries(s.root, want, restore.Live{Entries: c.scan.Entries, Trees: trees, RootStat: c.rootSt}, touched)
	rules := Hash{}
	if keptTrees {
		rules = c.rules
	}
	return s.saveIndex(out, rules)
}
