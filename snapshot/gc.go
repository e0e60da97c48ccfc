package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// GCOptions chooses which checkpoints GC keeps. A checkpoint is kept when any rule keeps it; with
// neither KeepLast nor KeepWithin set every checkpoint is kept and GC only removes what no
// checkpoint needs (objects and manifests left by interrupted or removed checkpoints).
type GCOptions struct {
	KeepLast   int           // keep the newest N checkpoints
	KeepWithin time.Duration // keep checkpoints younger than this
	// AutoKeepLast and AutoKeepWithin, when either is set, decide alone which automatic
	// checkpoints (KindAuto) are kept: the newest AutoKeepLast of each agent session, and those
	// younger than AutoKeepWithin. KeepLast and KeepWithin then govern the other kinds only.
	AutoKeepLast   int
	AutoKeepWithin time.Duration
	DryRun         bool // report what would be removed, remove nothing
}

// GCResult reports what GC removed (or, in a dry run, would remove).
type GCResult struct {
	DryRun           bool     `json:"dryRun"`
	Removed          []string `json:"removed"`            // checkpoint ids, oldest first
	Kept             int      `json:"kept"`               // checkpoints kept
	Protected        []string `json:"protected"`          // kept whatever the rules say (see GC)
	ManifestsRemoved int      `json:"manifestsRemoved"`   // manifests no kept checkpoint uses
	ObjectsRemoved   int      `json:"objectsRemoved"`     // objects (contents, manifest trees) no kept checkpoint uses
	BytesFreed       int64    `json:"bytesFreed"`         // their size
	PacksMerged      int      `json:"packsMerged"`        // small packs rewritten as one
	ChainSeq         *int64   `json:"chainSeq,omitempty"` // the "gc" entry, when checkpoints were removed
}

// GCRecord is the data of a "gc" chain entry: the checkpoints a GC is about to remove.
type GCRecord struct {
	Removed []string `json:"removed"`
}

// GC removes the checkpoints the options do not keep, then every manifest and object that no
// kept checkpoint (nor the stat cache) refers to. It never removes the current position, nor the
// safety checkpoint of the last rewind or replay, which is what undoing it restores.
// It takes the writers' lock, so it never runs inside a checkpoint or a rewind.
func (s *Store) GC(ctx context.Context, opts GCOptions) (*GCResult, error) {
	if opts.KeepLast < 0 || opts.KeepWithin < 0 || opts.AutoKeepLast < 0 || opts.AutoKeepWithin < 0 {
		return nil, fmt.Errorf("gc: KeepLast (%d), KeepWithin (%s), AutoKeepLast (%d) and AutoKeepWithin (%s) must not be negative", opts.KeepLast, opts.KeepWithin, opts.AutoKeepLast, opts.AutoKeepWithin)
	}
	unlock, err := s.lockAndRecover(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.gcLocked(ctx, opts)
}

// gcLocked is GC under the writers' lock, taken by the caller.
func (s *Store) gcLocked(ctx context.Context, opts GCOptions) (*GCResult, error) {
	cps, err := s.listCheckpoints()
	if err != nil {
		return nil, err
	}
	pos, err := s.readPosition()
	if err != nil {
		return nil, err
	}
	res := &GCResult{DryRun: opts.DryRun}
	now := time.Now()
	kept := retained(cps, pos, opts, now, res)
	manifests, liveObjects, err := s.gcMark(kept, opts.DryRun)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Remove checkpoints first, then manifests, then objects: a crash in between leaves only
	// unreferenced files, which the next GC removes.
	remove := gcRemover(opts.DryRun)
	if err := s.gcRemoveCheckpoints(res, opts.DryRun, remove); err != nil {
		return nil, err
	}
	if err := s.gcRemoveTemps(now, remove); err != nil {
		return nil, err
	}
	if err := s.gcRemoveManifests(manifests, res, remove); err != nil {
		return nil, err
	}
	if err := s.removeChunkLists(liveObjects, res, opts.DryRun); err != nil {
		return nil, err
	}
	if err := s.gcRemoveLoose(ctx, liveObjects, res, remove); err != nil {
		return nil, err
	}
	if err := s.gcPacks(liveObjects, res, opts.DryRun); err != nil {
		return nil, err
	}
	return res, nil
}

// gcMark returns what the kept checkpoints and the stat cache need: the manifests, and the
// objects (contents, trees, chunks). A directory's stat cache entry whose tree only removed
// checkpoints hold is dropped from the cache here (unless dryRun), before what it names goes.
func (s *Store) gcMark(kept []*Checkpoint, dryRun bool) (manifests, liveObjects map[Hash]bool, err error) {
	manifests = map[Hash]bool{}
	liveObjects = map[Hash]bool{}
	// A subtree an earlier manifest had is marked with everything under it: it is not read
	// again (checkpoints share most of their trees, and reading each whole manifest was most
	// of a gc's time).
	trees := map[Hash]bool{}
	marked := func(_ string, h Hash) ([]Entry, bool) { return nil, trees[h] }
	for _, c := range kept {
		if manifests[c.Manifest] {
			continue
		}
		manifests[c.Manifest] = true
		entries, subtrees, err := s.readManifestKnown(c.Manifest, marked)
		if err != nil {
			return nil, nil, fmt.Errorf("gc: checkpoint %s: %w (nothing was removed)", c.ID, err)
		}
		for _, h := range subtrees {
			liveObjects[h] = true
			trees[h] = true
		}
		for i := range entries {
			if entries[i].Type == TypeFile {
				liveObjects[entries[i].Blob] = true
			}
		}
	}
	idx, _, err := statcache.Load(filepath.Join(s.state, "index"))
	if err != nil {
		return nil, nil, err
	}
	// A directory's entry vouches for its tree and everything under it: one whose tree only
	// removed checkpoints hold goes from the cache, before what it names is removed.
	staleDirs := false
	for i := range idx.Entries {
		if e := &idx.Entries[i]; !statcache.IsDir(e) {
			liveObjects[e.Blob] = true
		} else if !treeKept(e, manifests, liveObjects) {
			staleDirs = true
		}
	}
	if staleDirs && !dryRun {
		keep := idx.Settled(func(e *statcache.Entry) bool { return !statcache.IsDir(e) || treeKept(e, manifests, liveObjects) })
		if err := s.saveIndex(keep, idx.Rules); err != nil {
			return nil, nil, fmt.Errorf("gc: %w", err)
		}
	}
	if err := s.keepChunks(liveObjects); err != nil {
		return nil, nil, err
	}
	return manifests, liveObjects, nil
}

// gcRemover returns gc's removal of one file: none in a dry run, and a file already gone is
// not an error.
func gcRemover(dryRun bool) func(name string) error {
	return func(name string) error {
		if dryRun {
			return nil
		}
		if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("gc: %w", err)
		}
		return nil
	}
}

// gcRemoveCheckpoints records the removal of res.Removed on the chain, then removes their
// metadata files and their tool calls (unless dryRun).
func (s *Store) gcRemoveCheckpoints(res *GCResult, dryRun bool, remove func(string) error) error {
	// The chain learns of the removal before it happens, so every "checkpoint" entry naming a
	// checkpoint that no longer exists is explained by a "gc" entry (a crash in between leaves
	// checkpoints the chain calls removed, which the next gc removes or keeps as it decides).
	if !dryRun && len(res.Removed) > 0 && s.opts.Recorder != nil {
		seq, err := s.opts.Recorder.Record("gc", GCRecord{Removed: res.Removed})
		if err != nil {
			return fmt.Errorf("gc: record the removal on the chain: %w (nothing was removed)", err)
		}
		res.ChainSeq = &seq
	}
	for _, id := range res.Removed {
		if err := remove(filepath.Join(s.state, "checkpoints", id)); err != nil {
			return err
		}
	}
	if !dryRun && len(res.Removed) > 0 {
		if err := s.dropCalls(res.Removed); err != nil {
			return fmt.Errorf("gc: %s: %w", callsFile, err)
		}
	}
	if !dryRun {
		if err := durable.SyncDir(filepath.Join(s.state, "checkpoints")); err != nil {
			return err
		}
	}
	return nil
}

// gcRemoveTemps removes the temporary files of durable writes a crash interrupted. The lock
// excludes live ones in checkpoints/ and manifests/; the state directory's own are also written
// by other parts of the store under their own locks (the chain, the ledger, the gateway's
// receipt), so there only those too old to belong to a write in progress go.
func (s *Store) gcRemoveTemps(now time.Time, remove func(string) error) error {
	for _, dir := range []string{s.state, filepath.Join(s.state, "checkpoints"), filepath.Join(s.state, "manifests")} {
		names, err := platform.ReadDirNames(dir)
		if err != nil {
			return err
		}
		for _, n := range names {
			if dir == s.state && strings.HasPrefix(n, ".tmp-") && !staleTemp(filepath.Join(dir, n), now) {
				continue
			}
			if strings.HasPrefix(n, ".tmp-") {
				if err := remove(filepath.Join(dir, n)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// gcRemoveManifests removes the manifests not in keep.
func (s *Store) gcRemoveManifests(keep map[Hash]bool, res *GCResult, remove func(string) error) error {
	mdir := filepath.Join(s.state, "manifests")
	names, err := platform.ReadDirNames(mdir)
	if err != nil {
		return err
	}
	for _, n := range names {
		h, err := ParseHash(n)
		if err != nil || keep[h] {
			continue
		}
		if err := remove(filepath.Join(mdir, n)); err != nil {
			return err
		}
		res.ManifestsRemoved++
	}
	return nil
}

// gcRemoveLoose removes the loose objects not in keep (packed ones: gcPacks).
func (s *Store) gcRemoveLoose(ctx context.Context, keep map[Hash]bool, res *GCResult, remove func(string) error) error {
	fans, err := platform.ReadDirNames(s.objects.Dir)
	if err != nil {
		return err
	}
	for _, fan := range fans {
		if len(fan) != 2 || !objects.IsLowerHex(fan) {
			continue // tmp/
		}
		dir := filepath.Join(s.objects.Dir, fan)
		names, err := platform.ReadDirNames(dir)
		if err != nil {
			return err
		}
		for _, n := range names {
			h, err := ParseHash(fan + n)
			if err != nil || keep[h] {
				continue
			}
			if fi, err := os.Lstat(filepath.Join(dir, n)); err == nil {
				res.BytesFreed += fi.Size()
			}
			if err := remove(filepath.Join(dir, n)); err != nil {
				return err
			}
			res.ObjectsRemoved++
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// retained applies opts's rules to cps (oldest first) at the position pos and time now: it
// returns the checkpoints kept, and fills res's Removed, Protected and Kept.
func retained(cps []*Checkpoint, pos *position, opts GCOptions, now time.Time, res *GCResult) []*Checkpoint {
	res.Removed, res.Protected = []string{}, []string{}
	protected := map[string]bool{pos.Current: true}
	if pos.Last != nil {
		protected[pos.Last.Safety] = true // undoing the last rewind or replay restores it
	}
	if pos.LastRestore != nil {
		protected[pos.LastRestore.Safety] = true // what the last restore of paths replaced
	}
	delete(protected, "")
	keepAll := opts.KeepLast == 0 && opts.KeepWithin == 0
	autoRules := opts.AutoKeepLast > 0 || opts.AutoKeepWithin > 0
	// The rank of each automatic checkpoint in its session, newest first.
	autoRank := map[string]int{}
	perSession := map[string]int{}
	for _, c := range slices.Backward(cps) {
		if c.Kind == KindAuto && c.Call != nil {
			autoRank[c.ID] = perSession[c.Call.Session]
			perSession[c.Call.Session]++
		}
	}
	var kept []*Checkpoint
	for i, c := range cps {
		var keep bool
		if autoRules && c.Kind == KindAuto {
			keep = protected[c.ID] ||
				(opts.AutoKeepLast > 0 && autoRank[c.ID] < opts.AutoKeepLast) ||
				(opts.AutoKeepWithin > 0 && now.Sub(c.Time) < opts.AutoKeepWithin)
		} else {
			keep = keepAll || protected[c.ID] ||
				(opts.KeepLast > 0 && i >= len(cps)-opts.KeepLast) ||
				(opts.KeepWithin > 0 && now.Sub(c.Time) < opts.KeepWithin)
		}
		if keep {
			kept = append(kept, c)
			if protected[c.ID] {
				res.Protected = append(res.Protected, c.ID)
			}
		} else {
			res.Removed = append(res.Removed, c.ID)
		}
	}
	res.Kept = len(kept)
	return kept
}

// mergeBelow is the size under which a pack is small: every checkpoint that stores something
// adds a pack (its trees, its small contents), and every process reads every pack index, so GC
// rewrites the small ones as one. Large packs (a first checkpoint's) stay as they are, so one
// GC copies at most mergeBelow bytes per small pack it finds.
const mergeBelow = 16 << 20

// gcPacks drops unreferenced objects from packs and merges the small ones: a pack with no needed
// object is removed; the small packs (mergeBelow), when there are two or more or one has
// unneeded objects, are rewritten together as one pack of the objects needed; a large pack with
// unneeded objects is rewritten alone. A new pack's index is durable before an old index goes,
// so a crash leaves an object in two packs, never in none.
func (s *Store) gcPacks(keep map[Hash]bool, res *GCResult, dryRun bool) error {
	ids, err := s.objects.PackIDs()
	if err != nil {
		return err
	}
	var small []packSource // the small packs, with the objects needed from each
	var smallDead bool
	for _, id := range ids {
		entries, err := s.objects.ReadPackIdx(id)
		if err != nil {
			return fmt.Errorf("gc: %w", err)
		}
		src := packSource{base: filepath.Join(s.objects.PackDir, id)}
		var size int64
		for _, e := range entries {
			if keep[e.Hash] {
				src.live = append(src.live, e)
				size += e.Size
			} else {
				res.ObjectsRemoved++
				res.BytesFreed += e.Size
			}
		}
		dead := len(src.live) < len(entries)
		switch {
		case len(src.live) == 0:
			if !dryRun {
				if err := src.remove(); err != nil {
					return fmt.Errorf("gc: %w", err)
				}
			}
		case size < mergeBelow:
			small = append(small, src)
			smallDead = smallDead || dead
		case dead && !dryRun:
			if err := s.repack([]packSource{src}); err != nil {
				return fmt.Errorf("gc: repack %s: %w", src.base+".pack", err)
			}
		}
	}
	if len(small) < 2 && !smallDead {
		return nil
	}
	if len(small) > 1 {
		res.PacksMerged = len(small)
	}
	if dryRun {
		return nil
	}
	if err := s.repack(small); err != nil {
		return fmt.Errorf("gc: merge %d small packs: %w", len(small), err)
	}
	return nil
}

// packSource is a pack (its path without .pack or .idx) and the objects needed from it.
type packSource struct {
	base string
	live []objects.PackEntry
}

// remove removes the pack: its index first, durably (the index makes its objects exist), then
// the pack file.
func (p packSource) remove() error {
	if err := durable.Remove(p.base + ".idx"); err != nil {
		return err
	}
	return os.Remove(p.base + ".pack")
}

// repack copies the needed objects of the packs srcs into one new pack, verifying each as it is
// copied, then removes srcs. An object in two of them is copied once.
func (s *Store) repack(srcs []packSource) error {
	p, err := s.objects.NewPack()
	if err != nil {
		return err
	}
	copied := map[Hash]bool{}
	for _, src := range srcs {
		if err := copyLive(p, src, copied); err != nil {
			p.Abort()
			return err
		}
	}
	if err := s.objects.FinishPack(p); err != nil {
		p.Abort()
		return err
	}
	s.objects.Forget()
	// The old indexes go first, durably (one directory flush for all), then their packs.
	for _, src := range srcs {
		if err := os.Remove(src.base + ".idx"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := durable.SyncDir(s.objects.PackDir); err != nil {
		return err
	}
	for _, src := range srcs {
		if err := os.Remove(src.base + ".pack"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// copyLive appends the needed objects of src to p, verifying each against its hash.
func copyLive(p *objects.PackWriter, src packSource, copied map[Hash]bool) error {
	f, err := regular.Open(src.base + ".pack")
	if err != nil {
		return err
	}
	defer f.Close()
	for _, e := range src.live {
		if copied[e.Hash] {
			continue
		}
		data := make([]byte, e.Size)
		if _, err := f.ReadAt(data, e.Off); err != nil {
			return err
		}
		if objects.Sum(data) != e.Hash {
			return &CorruptError{Path: src.base + ".pack", Reason: fmt.Sprintf("object %s at offset %d does not match its hash", e.Hash, e.Off)}
		}
		if err := p.Add(e.Hash, data); err != nil {
			return err
		}
		copied[e.Hash] = true
	}
	return nil
}

// treeKept reports whether the tree a directory entry of the stat cache names is kept: the
// root's as a manifest, another's as an object (with every tree and content under it, since the
// kept checkpoints' trees are kept whole).
func treeKept(e *statcache.Entry, manifests, liveObjects map[Hash]bool) bool {
	if e.Path == "" {
		return manifests[e.Blob]
	}
	return liveObjects[e.Blob]
}

// tempAge is how old a temporary file in the state directory must be before GC takes it for one a
// crash left: a durable write there (a few kilobytes to a few megabytes) lasts milliseconds.
const tempAge = time.Hour

// staleTemp reports whether the temporary file name was last written more than tempAge ago.
func staleTemp(name string, now time.Time) bool {
	st, err := os.Lstat(name)
	return err == nil && now.Sub(st.ModTime()) > tempAge
}
