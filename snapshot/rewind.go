package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/restore"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// RestoreOptions modifies Rewind and Replay.
type RestoreOptions struct {
	// DryRun computes the changes without taking a checkpoint, the lock, or touching anything.
	DryRun bool
	// Changed is a change watcher's hint relative to the current position (as for
	// CheckpointChanged), or nil. When it holds, the safety checkpoint looks only at the paths it
	// names instead of walking the tree; otherwise the tree is walked (SafetyResult.Walk says
	// why). A dry run walks.
	Changed *Changed
}

// RestoreResult is what Rewind and Replay return.
type RestoreResult struct {
	Op     string `json:"op"`     // "rewind" or "replay"
	OpID   string `json:"opId"`   // as in the chain record ("" in a dry run)
	From   string `json:"from"`   // the position before ("" if there was none)
	To     string `json:"to"`     // the checkpoint restored, now the position
	Safety string `json:"safety"` // the checkpoint holding the state left ("" in a dry run)
	// SafetyCreated tells whether a new safety checkpoint was written; false when the workspace
	// still equalled the position From, which then is Safety.
	SafetyCreated bool              `json:"safetyCreated"`
	DryRun        bool              `json:"dryRun"`
	Changes       []Change          `json:"changes"`        // From: the live entry, To: the restored one
	Kept          []Kept            `json:"kept,omitempty"` // paths left alone, and why
	ChainSeq      int64             `json:"chainSeq,omitempty"`
	Elapsed       Duration          `json:"elapsedMs"`
	SafetyResult  *CheckpointResult `json:"safetyCheckpoint,omitempty"`
}

// RestoreRecord is the data of a "rewind" or "replay" chain entry.
type RestoreRecord struct {
	OpID      string `json:"opId"`
	From      string `json:"from"`
	To        string `json:"to"` // where the workspace is now: the target, or Safety when undone
	Safety    string `json:"safety"`
	Recovered bool   `json:"recovered"` // finished by journal recovery after an interruption
	Outcome   string `json:"outcome"`   // "completed" or "undone"
}

// Rewind makes the workspace equal to checkpoint id (an id or unique prefix), any checkpoint of
// the timeline. It first takes a safety checkpoint of the current state (kind "safety", label
// "before rewind to <id>"), so the rewind itself can be undone, then changes only the paths that
// differ, under a journal, then moves the position and records a "rewind" entry.
func (s *Store) Rewind(ctx context.Context, id string, opts RestoreOptions) (*RestoreResult, error) {
	return s.move(ctx, "rewind", id, opts)
}

// Replay is Rewind restricted to moving forward: the target must have been recorded after the
// current position (a later time in the timeline), such as the safety checkpoint taken by the
// rewind that led here. Anything else is refused with ErrNotForward (use Rewind for it). It is
// recorded as "replay".
func (s *Store) Replay(ctx context.Context, id string, opts RestoreOptions) (*RestoreResult, error) {
	return s.move(ctx, "replay", id, opts)
}

// move is Rewind and Replay (op): resolve and check the target, then dry-run or restore it.
func (s *Store) move(ctx context.Context, op, ref string, opts RestoreOptions) (*RestoreResult, error) {
	start := time.Now()
	s.objects.Forget()
	if !opts.DryRun {
		unlock, err := s.lockAndRecover(ctx)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	id, err := s.Resolve(ref)
	if err != nil {
		return nil, err
	}
	// The metadata and the root of the target's manifest first: a target that is not there is
	// refused before anything is written. Its trees are read after the safety checkpoint, which
	// knows the live trees (loadTargetLive).
	meta, err := s.readCheckpoint(id)
	if err == nil {
		_, err = s.readManifestRoot(meta.Manifest)
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s (nothing was changed): %w", id, err)
	}
	pos, err := s.readPosition()
	if err != nil {
		return nil, err
	}
	if op == "replay" {
		if err := s.checkForward(pos, meta); err != nil {
			return nil, err
		}
	}
	liveIgn, err := s.loadIgnore()
	if err != nil {
		return nil, err
	}
	var res *RestoreResult
	if opts.DryRun {
		res, err = s.moveDryRun(ctx, op, id, pos, liveIgn)
	} else {
		res, err = s.moveLocked(ctx, op, id, pos, liveIgn, opts.Changed)
	}
	if res != nil {
		res.Elapsed = Duration(time.Since(start))
	}
	return res, err
}

// moveDryRun is move's plan without the safety checkpoint, the lock or any change.
func (s *Store) moveDryRun(ctx context.Context, op, id string, pos *position, liveIgn *Ignore) (*RestoreResult, error) {
	t, err := s.loadTarget(id)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s (nothing was changed): %w", id, err)
	}
	if err := checkNames(id, t.entries); err != nil {
		return nil, err
	}
	c, err := s.captureLive(ctx, false)
	if err != nil {
		return nil, err
	}
	p := restore.NewPlan(c.manifest(), t.entries, walk.Rules{liveIgn, t.ignore})
	return &RestoreResult{Op: op, From: pos.Current, To: id, DryRun: true, Changes: nonNil(p.Changes), Kept: p.Kept}, nil
}

// moveLocked is move under the lock: the safety checkpoint (narrowed by the watcher's hint, if
// any), the journal, the restore, and the undo of a restore whose target cannot be read.
func (s *Store) moveLocked(ctx context.Context, op, id string, pos *position, liveIgn *Ignore, hint *Changed) (*RestoreResult, error) {
	safety, c, err := s.checkpointLocked(ctx, fmt.Sprintf("before %s to %s", op, id), KindSafety, true, hint, nil)
	if err != nil {
		return nil, fmt.Errorf("safety checkpoint before %s (nothing was changed): %w", op, err)
	}
	j := &Journal{Op: op, OpID: objects.RandomHex(8), From: pos.Current, To: id, Safety: safety.ID, Time: time.Now().UTC()}
	t, err := s.journalAndLoad(j, c)
	if err != nil {
		return nil, err
	}
	r := walk.Rules{liveIgn, t.ignore}
	res, err := s.restoreLocked(ctx, j, t, r, c, false, "completed")
	if err != nil && errors.Is(err, ErrCorrupt) {
		// The target cannot be read (a damaged or unreadable object, an I/O error): undo now
		// rather than leave a half-restored workspace for the next command.
		if _, uerr := s.undoLocked(ctx, j, r, false); uerr != nil && !errors.Is(uerr, ErrNotRecorded) {
			return nil, fmt.Errorf("%w; putting the workspace back to the safety checkpoint %s failed too: %v (the journal is kept: the next agent-rewind command retries)", err, safety.ID, uerr)
		}
		return nil, fmt.Errorf("%w; the workspace was put back to the safety checkpoint %s", err, safety.ID)
	}
	if res != nil {
		res.SafetyCreated = !safety.Reused
		res.SafetyResult = safety
	}
	return res, err
}

// journalAndLoad writes the journal j while it reads the target's trees (loadTargetLive, against
// the safety checkpoint's capture c): the journal's fsyncs then cost no time of their own.
// Nothing is changed before both are done; a journal whose target turns out not to be readable
// is removed (were the process killed first, the next command would find the target unreadable
// and restore the safety checkpoint, which the workspace still is).
func (s *Store) journalAndLoad(j *Journal, c *capture) (*target, error) {
	journaled := make(chan error, 1)
	go func() { journaled <- s.writeJournal(j) }()
	t, err := s.loadTargetLive(j.To, c)
	if err == nil {
		err = checkNames(j.To, t.entries) // the folders it shares with the live workspace are here already
	}
	if jerr := <-journaled; jerr != nil {
		if rerr := durable.Remove(s.journalPath()); rerr != nil && !os.IsNotExist(rerr) {
			return nil, fmt.Errorf("write journal: %w; removing it failed too (%v): the next agent-rewind command finds the workspace as it is, checkpoint %s", jerr, rerr, j.Safety)
		}
		return nil, fmt.Errorf("write journal (nothing was changed): %w", jerr)
	}
	if err != nil {
		if rerr := durable.Remove(s.journalPath()); rerr != nil {
			return nil, fmt.Errorf("read checkpoint %s (nothing was changed; the workspace as it is is checkpoint %s): %w; removing the journal failed too (%v): the next agent-rewind command puts back that checkpoint, which changes nothing", j.To, j.Safety, err, rerr)
		}
		return nil, fmt.Errorf("read checkpoint %s (nothing was changed; the workspace as it is is checkpoint %s): %w", j.To, j.Safety, err)
	}
	return t, nil
}

// checkForward refuses a replay that does not move forward in time from the current position.
func (s *Store) checkForward(pos *position, to *Checkpoint) error {
	if pos.Current == "" {
		return fmt.Errorf("%w: there is no current position yet; use rewind", ErrNotForward)
	}
	if pos.Current == to.ID {
		return fmt.Errorf("%w: the workspace is already at %s; to discard changes since, use rewind %s", ErrNotForward, to.ID, to.ID)
	}
	cur, err := s.readCheckpoint(pos.Current)
	if err != nil {
		return err
	}
	if !to.Time.After(cur.Time) {
		return fmt.Errorf("%w: %s (%s) was recorded before the current position %s (%s): replay only moves forward; use rewind %s",
			ErrNotForward, to.ID, to.Time.Format(time.RFC3339), cur.ID, cur.Time.Format(time.RFC3339), to.ID)
	}
	return nil
}

// restoreLocked applies the journal's operation: plan against the live state (c, or a fresh
// hash-only capture when nil), apply, flush, then move the position, record, and remove the
// journal. Errors before the flush leave the journal in place for recovery.
func (s *Store) restoreLocked(ctx context.Context, j *Journal, t *target, r walk.Rules, c *capture, recovered bool, outcome string) (*RestoreResult, error) {
	if c == nil {
		var err error
		if c, err = s.captureWith(ctx, r); err != nil {
			return nil, err
		}
	}
	p := restore.NewPlan(c.entriesExcept(t.shared), t.entries, r)
	touched, kept, err := s.apply(ctx, &p, c)
	if err != nil && errors.Is(err, ErrCorrupt) {
		return nil, fmt.Errorf("%s to %s cannot read the target: %w", j.Op, j.To, err) // the caller undoes it
	}
	if err != nil {
		return nil, fmt.Errorf("%s to %s stopped: %w (the journal is kept: the next agent-rewind command finishes it)", j.Op, j.To, err)
	}
	pos, err := s.readPosition()
	if err != nil {
		return nil, err
	}
	pos.Current = t.meta.ID
	pos.Last = &Operation{Op: j.Op, From: j.From, To: j.To, Safety: j.Safety, Time: time.Now().UTC()}
	res := &RestoreResult{Op: j.Op, OpID: j.OpID, From: j.From, To: t.meta.ID, Safety: j.Safety, Changes: nonNil(withoutKept(p.Changes, kept)), Kept: append(p.Kept, kept...)}
	if err := s.flushThenPosition(touched, pos, func() error { return s.refreshIndex(c, t, touched) }); err != nil {
		return nil, err
	}
	recErr := s.finishRecords() // the safety checkpoint's entry first
	if s.opts.Recorder != nil {
		seq, err := s.opts.Recorder.Record(j.Op, RestoreRecord{OpID: j.OpID, From: j.From, To: t.meta.ID, Safety: j.Safety, Recovered: recovered, Outcome: outcome})
		if err != nil {
			recErr = errors.Join(recErr, fmt.Errorf("%w: %s %s to %s: %v", ErrNotRecorded, j.Op, j.OpID, t.meta.ID, err))
		}
		res.ChainSeq = seq
	}
	// The journal goes even when recording failed: keeping it would make a later command restore
	// the target again over whatever the agent did next.
	if err := durable.Remove(s.journalPath()); err != nil && !os.IsNotExist(err) {
		return res, fmt.Errorf("remove journal: %w", err)
	}
	return res, recErr
}

// flushThenPosition makes the restored files (touched) durable, then puts the new position pos
// in place. The position is written and flushed beside its file while the files are (its fsync
// overlaps theirs) and renamed only once all of them are durable: until then the journal's redo
// finds the position it left. afterFlush (nil: none) runs once the files are durable, before the
// rename: the stat cache must not vouch for a file whose content might not survive a crash.
func (s *Store) flushThenPosition(touched map[string]bool, pos *position, afterFlush func() error) error {
	staged := make(chan stagedFile, 1)
	go func() {
		f, err := s.stagePosition(pos)
		staged <- stagedFile{f, err}
	}()
	err := restore.Flush(s.root, touched)
	if err != nil {
		err = fmt.Errorf("flush restored files: %w", err)
	} else if afterFlush != nil {
		err = afterFlush()
	}
	r := <-staged
	if err != nil {
		if r.f != nil {
			r.f.Abort()
		}
		return err
	}
	if r.err == nil {
		r.err = r.f.Commit()
	}
	if r.err != nil {
		return fmt.Errorf("write position: %w", r.err)
	}
	return nil
}

// captureWith is captureLive (hash only) walking with the given rules instead of the live ones.
func (s *Store) captureWith(ctx context.Context, r walk.Rules) (*capture, error) {
	return s.captureLiveRules(ctx, false, r, nil)
}

// undoLocked restores the journal's safety checkpoint (outcome "undone"): what a restore whose
// target cannot be read ends with, so the workspace is never left half old, half new. r are the
// rules of the failed restore; the safety checkpoint's own are added.
func (s *Store) undoLocked(ctx context.Context, j *Journal, r walk.Rules, recovered bool) (*RestoreResult, error) {
	st, err := s.loadTarget(j.Safety)
	if err != nil {
		return nil, fmt.Errorf("read the safety checkpoint %s: %w", j.Safety, err)
	}
	return s.restoreLocked(ctx, j, st, append(r, st.ignore), nil, recovered, "undone")
}

// withoutKept drops the changes that applying left alone: they did not happen.
func withoutKept(changes []Change, kept []Kept) []Change {
	if len(kept) == 0 {
		return changes
	}
	left := make(map[string]bool, len(kept))
	for _, k := range kept {
		left[k.Path] = true
	}
	return slices.DeleteFunc(changes, func(c Change) bool { return left[c.Path] })
}

func nonNil(c []Change) []Change {
	if c == nil {
		return []Change{}
	}
	return c
}
