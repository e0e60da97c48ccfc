package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// CheckpointResult is what Checkpoint returns: the new checkpoint and what it took.
type CheckpointResult struct {
	Checkpoint
	// Reused is set on a safety checkpoint that was not written because the workspace still
	// equalled the current position: Checkpoint then is that position.
	Reused        bool      `json:"reused,omitempty"`
	NewObjects    int       `json:"newObjects"`         // contents stored for the first time
	NewBytes      int64     `json:"newBytes"`           // their bytes
	Hashed        int       `json:"hashed"`             // files read (the stat cache could not vouch for them)
	Verified      int       `json:"verified"`           // files the stat cache vouched for, read again to check it
	Skipped       []Skipped `json:"skipped,omitempty"`  // present but not captured
	Excluded      []string  `json:"excluded,omitempty"` // excluded paths, sorted, at most 100
	ExcludedCount int       `json:"excludedCount"`      // all excluded paths (a directory counts once)
	Warnings      []string  `json:"warnings,omitempty"` // things that cost time but not data
	Walk          Walk      `json:"walk"`               // how the paths were found: a full walk, or a watcher's hint
	ChainSeq      int64     `json:"chainSeq,omitempty"` // the chain entry's sequence number
	Elapsed       Duration  `json:"elapsedMs"`          // wall time of the whole operation
}

// Skipped is a path a checkpoint saw but did not capture, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"` // "socket", "fifo", "device", "changed while being read", …
}

// Duration marshals to JSON as integer milliseconds.
type Duration time.Duration

// MarshalJSON encodes d as milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%d", time.Duration(d).Milliseconds()), nil
}

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// CheckpointRecord is the data of a "checkpoint" chain entry.
type CheckpointRecord struct {
	ID       string    `json:"id"`
	Label    string    `json:"label"`
	Kind     Kind      `json:"kind"`
	Time     time.Time `json:"time"`
	Parent   string    `json:"parent"`
	Manifest string    `json:"manifest"` // sha256 of the manifest file's bytes
	Files    int       `json:"files"`
	Dirs     int       `json:"dirs"`
	Symlinks int       `json:"symlinks"`
	Skipped  int       `json:"skipped"`
	Bytes    int64     `json:"bytes"`
	Call     *ToolCall `json:"call,omitempty"` // KindAuto
}

// record is cp's chain entry data.
func (cp *Checkpoint) record() CheckpointRecord {
	return CheckpointRecord{
		ID: cp.ID, Label: cp.Label, Kind: cp.Kind, Time: cp.Time, Parent: cp.Parent, Manifest: cp.Manifest.String(),
		Files: cp.Counts.Files, Dirs: cp.Counts.Dirs, Symlinks: cp.Counts.Symlinks, Skipped: cp.Counts.Skipped, Bytes: cp.Counts.Bytes, Call: cp.Call,
	}
}

// Checkpoint captures the whole workspace (FORMAT.md) under label. Files whose stat matches the
// stat cache are not read; the others are hashed in parallel and their new contents stored. The
// checkpoint becomes the current position, then is recorded. If recording fails the checkpoint
// still exists and the error wraps ErrNotRecorded, with the result returned too (an Intender
// Recorder then records it late). If it cannot become the current position, it is removed.
func (s *Store) Checkpoint(ctx context.Context, label string) (*CheckpointResult, error) {
	return s.CheckpointChanged(ctx, label, nil)
}

// CheckpointChanged is Checkpoint with a change watcher's hint (changed.go): when the hint holds
// (it is relative to the current position), only the paths it names are looked at. A hint that
// cannot be used is ignored: the whole tree is walked, and Walk.Reason says why.
func (s *Store) CheckpointChanged(ctx context.Context, label string, hint *Changed) (*CheckpointResult, error) {
	start := time.Now()
	unlock, err := s.lockRecovered(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res, _, err := s.checkpointLocked(ctx, label, KindNormal, false, hint, nil)
	if res != nil {
		res.Elapsed = Duration(time.Since(start))
	}
	return res, err
}

// manifestStored reports whether the manifest (root tree) h is stored: then so is every tree it
// names.
func (s *Store) manifestStored(h Hash) bool {
	_, err := os.Lstat(filepath.Join(s.state, "manifests", h.String()))
	return err == nil
}

// checkpointLocked captures the workspace and commits a checkpoint of the given kind. With
// reuse, a workspace equal to the current position commits nothing and returns that position.
// It also returns the capture, which a restore uses as the live state.
//
// With reuse and a hint that nothing changed since the current position, it returns that
// position without looking at the tree, and a nil capture (only a caller without a hint uses it),
// unless kind is KindSafety, whose capture is always whole.
//
// It is long on purpose, for now: the manifest's root, the checkpoint's file, the position and
// the stat cache are written concurrently (their fsyncs overlap) and each is settled or
// abandoned, in the one order that keeps a crash harmless, by code that sees all of them (the
// deferred waits included). The write path's next change (one fsync per checkpoint) reshapes
// this sequence; it should leave it in steps of its own.
func (s *Store) checkpointLocked(ctx context.Context, label string, kind Kind, reuse bool, hint *Changed, call *ToolCall) (*CheckpointResult, *capture, error) {
	// A safety checkpoint's capture is the live state its restore plans against, which needs
	// every entry: neither the reuse without a look nor the tree edit (which looks only at the
	// changed paths) gives one, while the hint's capture (scanChanged) does, without a walk.
	whole := kind == KindSafety
	if reuse && hint != nil && len(hint.Paths) == 0 && !whole {
		if res := s.reuseUnchanged(hint); res != nil {
			return res, nil, nil // nothing to write: leftovers can wait for a writer
		}
	}
	if err := s.catchUpLog(); err != nil { // a checkpoint killed after its log's sync is finished first
		return nil, nil, err
	}
	if err := s.cleanLeftovers(); err != nil {
		return nil, nil, err
	}
	ign, err := s.loadIgnore()
	if err != nil {
		return nil, nil, err
	}
	// A hint of a few paths edits the current manifest's trees (treeedit.go); otherwise the
	// workspace is captured, walked or narrowed by the hint.
	var ed *editedCheckpoint
	if !whole {
		if ed, err = s.tryEdit(ctx, ign, hint); err != nil {
			return nil, nil, err
		}
	}
	var c *capture
	var tr *manifest.Trees
	var counts Counts
	saveCache := func() error { return s.writeIndex(c) }
	if ed != nil {
		c, tr, counts, saveCache = ed.c, ed.trees, ed.counts, ed.cache
	} else {
		if c, err = s.captureLiveRules(ctx, true, ign, hint); err != nil {
			return nil, nil, err
		}
		live := c.scan.Entries
		at := func(i int) *Entry { return &live[i].Entry }
		tr = manifest.EncodeTrees(len(live), at, c.reusableTrees())
		if (tr.Root == nil && !s.manifestStored(tr.Hash)) || !s.allStored(tr.Reused) {
			// A tree the cache names is no longer stored (removed by hand, or a repair): encode all.
			tr = manifest.EncodeTrees(len(live), at, nil)
		}
		c.trees = tr.Dirs
		if tr.Root != nil {
			c.indexDirty = true // a directory's tree was encoded: record it, so the next one is not
		}
		counts = countEntries(live)
	}
	live := c.scan.Entries
	mh := tr.Hash
	mname := filepath.Join(s.state, "manifests", mh.String())
	treesStored := s.manifestStored(mh) // a manifest file that exists names only stored trees
	// What the result reports as stored: the contents; the trees are counted by neither.
	newObjects, newBytes := c.stager.Count(), c.stager.NewBytes
	if !treesStored {
		for h, b := range tr.Nodes {
			if err := c.stager.PutBytes(h, b); err != nil {
				c.stager.Discard()
				return nil, nil, fmt.Errorf("write manifest trees: %w", err)
			}
		}
	}
	// A checkpoint whose new objects fit one pack commits through the commit log
	// (commitlog.go): one sync instead of one per file and folder. (A rewind's safety checkpoint
	// too: the rewind's own position, written durably, settles the log first: stagePosition.)
	var lg *objects.Logged
	if s.logs() {
		var ok bool
		if lg, ok, err = c.stager.CommitLogged(logPackMax); err != nil {
			return nil, nil, fmt.Errorf("write pack: %w", err)
		} else if !ok {
			lg = nil
		}
	}
	// The manifest's root is written and flushed while the pack is (their fsyncs overlap), and
	// put in place only after the trees it names are durable (below). It and the checkpoint's
	// file are staged in objects/tmp, which the next writer empties should this one be killed.
	var staged chan stagedFile
	if !treesStored && lg == nil {
		staged = make(chan stagedFile, 1)
		go func() {
			f, err := durable.StageIn(s.objects.TmpDir(), mname, tr.Root, 0o600)
			staged <- stagedFile{f, err}
		}()
		defer func() {
			if staged != nil {
				if r := <-staged; r.f != nil {
					r.f.Abort()
				}
			}
		}()
	}
	if lg == nil {
		if err := c.stager.Commit(); err != nil {
			return nil, nil, err
		}
	}
	// The stat cache may be written as soon as everything it names is stored, the root's
	// manifest included (its entry for the workspace's folder names it): do it while the
	// checkpoint's metadata is written. (Should the checkpoint fail after this, the cache still
	// holds only true facts: which stat had which stored content or tree.) A SIGKILL between an
	// earlier write of the cache and the manifest's left a cache naming a manifest not stored.
	indexDone := make(chan error, 1)
	indexStarted, indexWritten := false, false
	startIndex := func() {
		if !indexStarted {
			indexStarted = true
			go func() { indexDone <- saveCache() }()
		}
	}
	defer func() {
		if indexStarted && !indexWritten {
			<-indexDone
		}
	}()
	if treesStored && lg == nil {
		startIndex()
	}
	pos, err := s.readPosition()
	if err != nil {
		if lg != nil {
			c.stager.Discard()
		}
		return nil, nil, err
	}
	res := &CheckpointResult{NewObjects: newObjects, NewBytes: newBytes, Hashed: c.hashed, Verified: c.verified,
		Excluded: c.scan.Excluded, ExcludedCount: c.scan.ExcludedCount, Warnings: c.warnings, Walk: c.walk}
	for i := range live {
		if e := &live[i]; e.Type == TypeSkipped {
			res.Skipped = append(res.Skipped, Skipped{Path: e.Path, Reason: e.Reason})
		}
	}
	if reuse && pos.Current != "" {
		cur, err := s.readCheckpoint(pos.Current)
		if err == nil && cur.Manifest == mh {
			if lg != nil {
				c.stager.Discard() // the current checkpoint's manifest names only stored objects
			}
			res.Checkpoint, res.Reused = *cur, true
			startIndex() // the current checkpoint's manifest is stored
			indexWritten = true
			return res, c, <-indexDone
		}
	}
	// The root last, after the trees it names (committed with the contents, above).
	if !treesStored && lg == nil {
		r := <-staged
		staged = nil
		if r.err == nil {
			r.err = r.f.Commit()
		}
		if r.err != nil {
			return nil, nil, fmt.Errorf("write manifest: %w", r.err)
		}
	}
	if lg == nil {
		startIndex()
	}
	cp := Checkpoint{Time: time.Now().UTC(), Kind: kind, Label: label, Parent: pos.Current, Manifest: mh, Counts: counts, Call: call}
	if !cp.Time.After(pos.Time) {
		cp.Time = pos.Time.Add(time.Nanosecond)
	}
	b, id := encodeCheckpoint(&cp)
	cp.ID = id
	cname := filepath.Join(s.state, "checkpoints", id)
	if _, err := os.Lstat(cname); err == nil {
		if lg != nil {
			c.stager.Discard()
		}
		return nil, nil, fmt.Errorf("checkpoint id %s already exists (a 48-bit collision): try again", id)
	}
	pos.Current, pos.Time = id, cp.Time
	if lg != nil {
		var root []byte
		if !treesStored {
			root = tr.Root
		}
		indexWritten = true // written by commitLogged, once all it names exists
		err := s.commitLogged(res, logged{pack: lg, root: root, mname: mname, cp: &cp, cpBytes: b, pos: pos, saveCache: saveCache, call: call})
		if res.Checkpoint.ID == "" {
			c.stager.Discard()
			return nil, nil, err
		}
		return res, c, err
	}
	// The checkpoint file and the new position are written and flushed while the chain's note
	// is (their fsyncs overlap), and put in place only after it, in order: note, checkpoint,
	// position, so that a crash leaves what it always did.
	stagedCheckpoint, stagedPosition := make(chan stagedFile, 1), make(chan stagedFile, 1)
	go func() {
		f, err := durable.StageIn(s.objects.TmpDir(), cname, b, 0o600)
		stagedCheckpoint <- stagedFile{f, err}
	}()
	newPos := *pos
	go func() {
		f, err := s.stagePosition(&newPos)
		stagedPosition <- stagedFile{f, err}
	}()
	settle := func(c chan stagedFile) error { // waits for a staged file and puts it in place
		r := <-c
		if r.err != nil {
			return r.err
		}
		return r.f.Commit()
	}
	abandon := func(cs ...chan stagedFile) { // waits for staged files and removes them
		for _, c := range cs {
			if r := <-c; r.f != nil {
				r.f.Abort()
			}
		}
	}
	record, drop, err := s.intend("checkpoint", cp.record(), cname, b)
	if err != nil {
		abandon(stagedCheckpoint, stagedPosition)
		return nil, nil, fmt.Errorf("checkpoint not taken: %w", err)
	}
	if err := settle(stagedCheckpoint); err != nil {
		abandon(stagedPosition)
		drop()
		return nil, nil, fmt.Errorf("write checkpoint: %w", err)
	}
	if err := settle(stagedPosition); err != nil {
		// A checkpoint that did not become the position failed: take it back, so that it is not
		// listed as if it had been taken.
		if rerr := durable.Remove(cname); rerr != nil {
			return nil, nil, fmt.Errorf("write position: %w; removing the checkpoint %s also failed (%v), so it stays, and the next command records it on the chain", err, id, rerr)
		}
		drop()
		return nil, nil, fmt.Errorf("write position: %w (checkpoint not taken)", err)
	}
	res.Checkpoint = cp
	indexWritten = true
	// An automatic checkpoint's tool call is noted in the calls log while the chain records the
	// checkpoint: both only need it committed, and their fsyncs then overlap.
	var noted chan error
	if call != nil {
		noted = make(chan error, 1)
		go func() { noted <- s.appendCall(CallRecord{ToolCall: *call, Checkpoint: id, Time: time.Now().UTC()}) }()
	}
	indexErr := <-indexDone // a cache: the checkpoint is committed and recorded either way
	var recErr error
	if s.opts.Recorder != nil {
		res.ChainSeq, recErr = record()
	}
	if noted != nil { // waited for before the caller lets the lock go
		if err := <-noted; err != nil && indexErr == nil {
			indexErr = fmt.Errorf("checkpoint %s taken, but the tool call %s could not be noted in %s: %w", id, call.ID, callsFile, err)
		}
	}
	if recErr != nil {
		return res, c, fmt.Errorf("%w: checkpoint %s: %v", ErrNotRecorded, id, recErr)
	}
	return res, c, indexErr
}

// stagedFile is a durable.Stage result.
type stagedFile struct {
	f   *durable.Staged
	err error
}

// allStored reports whether every tree of hs is stored (a lookup error counts as not).
func (s *Store) allStored(hs []Hash) bool {
	for _, h := range hs {
		if ok, err := s.objects.Has(h); !ok || err != nil {
			return false
		}
	}
	return true
}

// intend notes a chain entry before the commit it describes, when the Recorder can (Intender),
// and returns how to record it after the commit, and how to drop the note when the commit fails.
func (s *Store) intend(kind string, data any, file string, content []byte) (record func() (int64, error), drop func(), err error) {
	switch r := s.opts.Recorder.(type) {
	case nil:
		return func() (int64, error) { return 0, nil }, func() {}, nil
	case Intender:
		return r.Intend(kind, data, file, content)
	default:
		return func() (int64, error) { return r.Record(kind, data) }, func() {}, nil
	}
}

func countEntries(entries []walk.LiveEntry) Counts {
	var n Counts
	for i := range entries {
		switch entries[i].Type {
		case TypeFile:
			n.Files++
			n.Bytes += entries[i].Size
		case TypeDir:
			n.Dirs++
		case TypeSymlink:
			n.Symlinks++
		case TypeSkipped:
			n.Skipped++
		}
	}
	return n
}
