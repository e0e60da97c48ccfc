package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// capture is the live workspace as one checkpoint would record it.
type capture struct {
	scan       *walk.Scan
	hashed     int
	verified   int  // files the cache vouched for, read again to check it (see sample.go)
	distrusted bool // the sample caught the cache vouching for wrong content: every file was read
	warnings   []string
	stager     *objects.Stager  // nil when hashing only
	index      *statcache.Index // the stat cache the capture started from
	indexDirty bool
	walk       Walk // how the paths were found (changed.go)

	rules    Hash            // the key of the exclusion rules (treecache.go)
	rulesOK  bool            // rules has a key: directory trees may be reused and recorded
	rootSt   platform.Stat   // the root's lstat; zero when the paths came from a hint
	dirTrees map[string]Hash // directories whose lstat the cache holds: their cached tree hash
	trees    map[string]Hash // every directory's tree hash, once encoded (checkpointLocked)
}

// manifest returns the entries as a manifest lists them.
func (c *capture) manifest() []Entry {
	out := make([]Entry, len(c.scan.Entries))
	for i := range c.scan.Entries {
		out[i] = c.scan.Entries[i].Entry
	}
	return out
}

// testHookAfterScan, set by tests only, runs after a capture's walk: what another program
// changes then, the capture did not see.
var testHookAfterScan func()

// captureLive walks the workspace and fills in every file's hash, from the stat cache when it can
// vouch for the file, by reading it otherwise. A random sample of the vouched files is read too
// (sample.go); when one disagrees, every file is read. With store set, new contents are staged
// for the object store; without, files are only hashed (Diff, dry runs), and a cache found wrong
// is dropped.
func (s *Store) captureLive(ctx context.Context, store bool) (*capture, error) {
	ign, err := s.loadIgnore()
	if err != nil {
		return nil, err
	}
	return s.captureLiveRules(ctx, store, ign, nil)
}

// captureLiveRules is captureLive with the exclusion rules given, and a watcher's hint, if any,
// of what may have changed (changed.go).
func (s *Store) captureLiveRules(ctx context.Context, store bool, ign walk.Matcher, hint *Changed) (*capture, error) {
	c, err := s.scanLive(ctx, ign, hint)
	if err != nil {
		return nil, err
	}
	if testHookAfterScan != nil {
		testHookAfterScan()
	}
	if err := s.hashUnvouched(ctx, c, store); err != nil {
		return nil, err
	}
	if err := s.inheritModes(c); err != nil {
		return nil, err
	}
	return c, nil
}

// scanLive finds the workspace's paths, by the hint's paths when it can be trusted, else by a
// walk, and loads the stat cache meanwhile: the capture, its files not hashed yet.
func (s *Store) scanLive(ctx context.Context, ign walk.Matcher, hint *Changed) (*capture, error) {
	// The stat cache is read while the walk runs (a full walk does not need it until the end):
	// reading and decoding it is a few ms for 20,000 files, and the walk leaves a core idle at times.
	type loaded struct {
		idx  *statcache.Index
		warn string
		err  error
	}
	index := make(chan loaded, 1)
	go func() {
		idx, warn, err := statcache.LoadLazy(filepath.Join(s.state, "index"))
		index <- loaded{idx, warn, err}
	}()
	var (
		idx  *statcache.Index
		warn string
		err  error
	)
	waitIndex := func() error {
		if idx == nil {
			ld := <-index
			if ld.err != nil {
				return ld.err
			}
			idx, warn = ld.idx, ld.warn
		}
		return nil
	}
	// The root's own stat, for its tree (treecache.go), taken before its listing, as the walk
	// takes every folder's: a change between the two then shows as a stat that differs, never
	// as a stat that matches a listing older than it.
	rootSt, rootErr := platform.Lstat(s.root)
	var seen atomic.Int64
	stop := s.progress("scan", func() Progress { return Progress{Done: seen.Load()} })
	var sc *walk.Scan
	how := Walk{Mode: "full"}
	if hint != nil {
		if err := waitIndex(); err != nil {
			stop()
			return nil, err
		}
		idx.Decode()
		sc, how.Reason, err = s.scanChanged(ctx, ign, hint, idx, &seen)
		if sc != nil {
			how = hint.walk()
		}
	}
	if sc == nil && err == nil {
		sc, err = walk.Walk(ctx, s.root, s.stateRel, ign, s.opts.Parallelism, &seen)
	}
	stop()
	if err != nil {
		return nil, err
	}
	if err := waitIndex(); err != nil {
		return nil, err
	}
	c := &capture{scan: sc, walk: how}
	c.index = idx
	if warn != "" {
		c.warnings = append(c.warnings, warn)
	}
	c.rules, c.rulesOK = ruleKey(ign)
	if how.Mode == "full" && c.rulesOK && rootErr == nil {
		// A hint's scan has no folder stats: its trees are neither reused nor recorded.
		c.rootSt = rootSt
	}
	return c, nil
}

// hashUnvouched gives each file of the capture its hash: the stat cache's where it vouches for
// the file (a sample of those read again), read otherwise (and, with store, staged for the
// object store); it notes the folders whose cached tree may be reused.
func (s *Store) hashUnvouched(ctx context.Context, c *capture, store bool) error {
	idx := c.index
	ic := idx.Cursor()
	if c.rulesOK && idx.Rules == c.rules && c.rootSt.Mode != 0 {
		c.dirTrees = map[string]Hash{}
		if r := ic.Entry(); r != nil && r.Path == "" && idx.Clean(r, c.rootSt) {
			c.dirTrees[""] = r.Blob
		}
	}
	todo, vouched, files, dirs := c.pairWithCache(idx, ic)
	if len(vouched) > 0 {
		var err error
		if todo, err = s.checkSample(ctx, c, store, vouched, todo); err != nil {
			return err
		}
	}
	if c.rootSt.Mode != 0 {
		dirs++
	}
	for ic.Entry() != nil { // the cache's entries past the last path: counted
		ic.Advance()
	}
	c.indexDirty = len(todo) > 0 || files+dirs != ic.Count
	if store {
		c.stager = objects.NewStager(s.objects)
	}
	c.hashed = len(todo)
	if len(todo) == 0 {
		return nil
	}
	return s.hashFiles(ctx, c, todo)
}

// pairWithCache pairs each file and directory of the capture's scan with its stat cache entry
// (ic, a cursor at idx's first): a clean file takes the cache's hash (vouched: the small ones,
// which a sample reads again) and every other file is to be read (todo); a clean directory's
// tree is noted in c.dirTrees when the rules allow. It counts the files and the directories.
func (c *capture) pairWithCache(idx *statcache.Index, ic *statcache.Cursor) (todo, vouched []int, files, dirs int) {
	// Both lists are sorted by path: one merge pass pairs each file and directory with its cache
	// entry.
	var match statcache.Entry // the cache entry of the path at hand (the cursor moves past it)
	for i := range c.scan.Entries {
		e := &c.scan.Entries[i]
		if e.Type != TypeFile && e.Type != TypeDir {
			continue
		}
		// Equality first: in the usual case the next cache entry is this path, and one equality
		// test (which stops at a length that differs) is cheaper than ordering long paths that
		// share their folders.
		var ie *statcache.Entry
		for r := ic.Entry(); r != nil; r = ic.Entry() {
			if r.Path == e.Path {
				match = *r
				ie = &match
				ic.Advance()
				break
			} else if r.Path > e.Path {
				break
			}
			ic.Advance()
		}
		if e.Type == TypeDir {
			if e.St.Mode != 0 {
				dirs++
			}
			if c.dirTrees != nil && idx.Clean(ie, e.St) {
				c.dirTrees[e.Path] = ie.Blob
			}
			continue
		}
		files++
		if idx.Clean(ie, e.St) {
			e.Blob = ie.Blob
			e.Cached = true
			if e.St.Size <= sampleMaxSize {
				vouched = append(vouched, i)
			}
		} else {
			todo = append(todo, i)
		}
	}
	return todo, vouched, files, dirs
}

// checkSample reads a random sample of the vouched files (sample.go) and returns what is to be
// read: todo, or every file when one of the sample disagrees with the cache, which is then
// distrusted (rebuilt by a capture that stores, dropped by one that does not).
func (s *Store) checkSample(ctx context.Context, c *capture, store bool, vouched, todo []int) ([]int, error) {
	sample := pickSample(vouched, sampleCount(len(vouched)))
	wrong, err := s.verifySample(ctx, c.scan.Entries, sample)
	if err != nil {
		return nil, err
	}
	c.verified = len(sample)
	if len(wrong) > 0 {
		c.distrusted = true
		then := "the cache is rebuilt from what was read"
		if !store {
			// A capture that stores nothing cannot rebuild the cache (its blobs must be
			// stored), so it drops it: the next checkpoint reads every file and rebuilds it.
			then = "the cache was dropped, and the next checkpoint rebuilds it"
			name := filepath.Join(s.state, "index")
			if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("drop the stat cache, found wrong: %w", err)
			}
			if err := statcache.RemoveLog(name); err != nil {
				return nil, fmt.Errorf("drop the stat cache, found wrong: %w", err)
			}
		}
		c.warnings = append(c.warnings, distrustWarning(wrong, len(sample), then))
		c.dirTrees = nil
		todo = todo[:0]
		for i := range c.scan.Entries {
			if c.scan.Entries[i].Type == TypeFile {
				c.scan.Entries[i].Cached = false
				todo = append(todo, i)
			}
		}
	}
	return todo, nil
}

// hashFiles reads and hashes the files todo of the capture, in parallel, staging new contents
// when the capture stores.
func (s *Store) hashFiles(ctx context.Context, c *capture, todo []int) error {
	var done, bytes atomic.Int64
	stop := s.progress("hash", func() Progress {
		return Progress{Done: done.Load(), Total: int64(len(todo)), Bytes: bytes.Load()}
	})
	defer stop()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Parallelism)
	for _, i := range todo {
		if gctx.Err() != nil {
			break
		}
		e := &c.scan.Entries[i]
		g.Go(func() error {
			err := s.hashEntry(e, c.stager, &bytes)
			done.Add(1)
			return err
		})
	}
	err := g.Wait()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if c.stager != nil {
			c.stager.Discard() // a full disk must not leave a partial pack behind (see stager.discard)
		}
		return err
	}
	return nil
}
