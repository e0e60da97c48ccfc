package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
	"github.com/agent-rewind/rewind/snapshot/internal/upkeep"
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
	live, err := s.gcMark(kept, opts.DryRun)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Remove checkpoints first, then manifests, then objects: a crash in between leaves only
	// unreferenced files, which the next GC removes.
	if err := s.gcRemoveCheckpoints(res, opts.DryRun); err != nil {
		return nil, err
	}
	swept, err := upkeep.Sweep{Objects: s.objects, StateDir: s.state, Live: live, DryRun: opts.DryRun, Now: now}.Run(ctx)
	if err != nil {
		return nil, err
	}
	res.ManifestsRemoved, res.ObjectsRemoved, res.BytesFreed, res.PacksMerged = swept.Manifests, swept.Objects, swept.Bytes, swept.PacksMerged
	return res, nil
}

// gcMark returns what the kept checkpoints and the stat cache need: the manifests, and the
// objects (contents, trees, chunks). A directory's stat cache entry whose tree only removed
// checkpoints hold is dropped from the cache here (unless dryRun), before what it names goes.
func (s *Store) gcMark(kept []*Checkpoint, dryRun bool) (*upkeep.Live, error) {
	live := upkeep.NewLive()
	// A subtree an earlier manifest had is marked with everything under it: it is not read
	// again (checkpoints share most of their trees, and reading each whole manifest was most
	// of a gc's time).
	trees := map[Hash]bool{}
	marked := func(_ string, h Hash) ([]Entry, bool) { return nil, trees[h] }
	for _, c := range kept {
		if live.Manifests[c.Manifest] {
			continue
		}
		live.Manifests[c.Manifest] = true
		entries, subtrees, err := s.readManifestKnown(c.Manifest, marked)
		if err != nil {
			return nil, fmt.Errorf("gc: checkpoint %s: %w (nothing was removed)", c.ID, err)
		}
		for _, h := range subtrees {
			live.Objects[h] = true
			trees[h] = true
		}
		for i := range entries {
			if entries[i].Type == TypeFile {
				live.Objects[entries[i].Blob] = true
			}
		}
	}
	idx, _, err := statcache.Load(filepath.Join(s.state, "index"))
	if err != nil {
		return nil, err
	}
	if live.MarkStatCache(idx) && !dryRun {
		if err := s.saveIndex(idx.Settled(live.Keeps), idx.Rules); err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
	}
	if err := live.MarkChunks(s.objects); err != nil {
		return nil, err
	}
	return live, nil
}

// gcRemoveCheckpoints records the removal of res.Removed on the chain, then removes their
// metadata files and their tool calls (unless dryRun).
func (s *Store) gcRemoveCheckpoints(res *GCResult, dryRun bool) error {
	if dryRun {
		return nil
	}
	// The chain learns of the removal before it happens, so every "checkpoint" entry naming a
	// checkpoint that no longer exists is explained by a "gc" entry (a crash in between leaves
	// checkpoints the chain calls removed, which the next gc removes or keeps as it decides).
	if len(res.Removed) > 0 && s.opts.Recorder != nil {
		seq, err := s.opts.Recorder.Record("gc", GCRecord{Removed: res.Removed})
		if err != nil {
			return fmt.Errorf("gc: record the removal on the chain: %w (nothing was removed)", err)
		}
		res.ChainSeq = &seq
	}
	for _, id := range res.Removed {
		if err := os.Remove(filepath.Join(s.state, "checkpoints", id)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("gc: %w", err)
		}
	}
	if len(res.Removed) > 0 {
		if err := s.dropCalls(res.Removed); err != nil {
			return fmt.Errorf("gc: %s: %w", callsFile, err)
		}
	}
	return durable.SyncDir(filepath.Join(s.state, "checkpoints"))
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
