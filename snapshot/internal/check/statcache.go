package check

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// statCache checks every entry of the stat cache that vouches for a live file (its stat matches
// and it is not racily clean): that its content is stored, and by reading the file that it is
// the file's content.
func (c *checker) statCache(ctx context.Context, packed map[Hash]location) error {
	sec := c.section("statCache")
	name := filepath.Join(c.StateDir, "index")
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	drop := func(p Problem) {
		p.Where = "index"
		p.Fix = "run check --repair: it drops the stat cache, and the next checkpoint reads every file and rebuilds it"
		sec.Problems = append(sec.Problems, p)
	}
	if err != nil {
		drop(Problem{Kind: "stat-cache-corrupt", What: err.Error()})
		return c.dropCache(sec)
	}
	if _, _, err := statcache.Decode(data); err != nil {
		drop(Problem{Kind: "stat-cache-corrupt", What: err.Error() + " (checkpoints ignore it and read every file)"})
		return c.dropCache(sec)
	}
	idx, _, err := statcache.Load(name) // with its log applied: what a checkpoint trusts
	if err != nil {
		return err
	}
	entries := idx.Entries
	for i := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := &entries[i]
		sec.Checked++
		if statcache.IsDir(e) {
			c.statCacheDir(e, idx, packed, drop)
			continue
		}
		if manifest.CheckPath(e.Path) != nil {
			drop(Problem{Kind: "stat-cache-corrupt", Path: e.Path, What: "an entry's path is not a workspace path"})
			continue
		}
		full := filepath.Join(c.Root, e.Path)
		live, err := platform.Lstat(full)
		if err != nil || !idx.Clean(e, live) {
			continue // the cache does not vouch for this file now: a checkpoint reads it
		}
		if _, ok := packed[e.Blob]; !ok {
			if _, err := os.Lstat(c.Objects.Path(e.Blob)); err != nil && !c.Objects.HasList(e.Blob) {
				drop(Problem{Kind: "stat-cache-unstored", Path: e.Path,
					What: fmt.Sprintf("vouches for content %s, which is not stored: the next checkpoint would name a content it cannot restore", e.Blob)})
				continue
			}
		}
		h, err := c.Store.HashFile(full, e.St)
		if err != nil {
			continue // changed while being read, or unreadable: not evidence either way
		}
		if h != e.Blob {
			drop(Problem{Kind: "stat-cache-stale", Path: e.Path,
				What: fmt.Sprintf("vouches for content %s, but the file holds %s: a checkpoint would record the wrong content without reading it", e.Blob, h)})
		}
	}
	if len(sec.Problems) > 0 {
		return c.dropCache(sec)
	}
	return nil
}

// statCacheDir checks a directory entry of the stat cache (the snapshot package's
// treecache.go): that the tree it vouches for, while the directory's stat is the entry's, is
// stored (the root's as a manifest). Whether the tree is the directory's is what a checkpoint
// decides from its children's entries.
func (c *checker) statCacheDir(e *statcache.Entry, idx *statcache.Index, packed map[Hash]location, drop func(Problem)) {
	if e.Path != "" && manifest.CheckPath(e.Path) != nil {
		drop(Problem{Kind: "stat-cache-corrupt", Path: e.Path, What: "an entry's path is not a workspace path"})
		return
	}
	live, err := platform.Lstat(filepath.Join(c.Root, e.Path))
	if err != nil || !idx.Clean(e, live) {
		return // not vouched for now: a checkpoint encodes the tree
	}
	stored := filepath.Join(c.StateDir, "manifests", e.Blob.String())
	if e.Path != "" {
		if _, ok := packed[e.Blob]; ok {
			return
		}
		stored = c.Objects.Path(e.Blob)
	}
	if _, err := os.Lstat(stored); err != nil {
		drop(Problem{Kind: "stat-cache-unstored", Path: e.Path,
			What: fmt.Sprintf("vouches for directory tree %s, which is not stored: the next checkpoint would name a tree it cannot restore", e.Blob)})
	}
}

// dropCache removes the stat cache when repairing and marks the section's problems repaired.
func (c *checker) dropCache(sec *Section) error {
	if !c.Options.Repair {
		return nil
	}
	name := filepath.Join(c.StateDir, "index")
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("drop the stat cache: %w", err)
	}
	if err := statcache.RemoveLog(name); err != nil {
		return fmt.Errorf("drop the stat cache: %w", err)
	}
	for i := range sec.Problems {
		sec.Problems[i].Repaired = true
	}
	return nil
}
