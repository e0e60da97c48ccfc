package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/restore"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// PathsResult is what RestorePaths returns: a RestoreResult with Op "restore", To the checkpoint
// the paths came from, From the position (unchanged), and the paths asked for.
type PathsResult struct {
	RestoreResult
	Paths []string `json:"paths"`
}

// PathsRecord is the data of a "restore" chain entry.
type PathsRecord struct {
	OpID       string   `json:"opId"`
	Checkpoint string   `json:"checkpoint"` // where the paths came from
	Paths      []string `json:"paths"`
	Position   string   `json:"position"`  // the position, which a restore of paths does not move
	Safety     string   `json:"safety"`    // the checkpoint holding the state before
	Changed    int      `json:"changed"`   // paths changed
	Kept       int      `json:"kept"`      // paths left alone
	Recovered  bool     `json:"recovered"` // finished by journal recovery after an interruption
	Outcome    string   `json:"outcome"`   // "completed", or "undone": the paths were put back from Safety
}

// RestorePaths makes the chosen paths (and everything under them) equal to their state in
// checkpoint id, and leaves every other path and the position alone. A path the checkpoint does
// not have is deleted. It follows a rewind's rules: a safety checkpoint of the whole workspace
// first (kind "safety", a side branch: the position stays), nothing written through a symlink or
// outside the workspace, live paths not captured never touched, a journal while it changes the
// workspace (a kill is finished by the next command, or the paths put back from the safety
// checkpoint when the checkpoint cannot be read); then a "restore" chain entry. Paths are
// workspace-relative and slash-separated (as in a manifest).
func (s *Store) RestorePaths(ctx context.Context, id string, paths []string, opts RestoreOptions) (*PathsResult, error) {
	start := time.Now()
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no path given: name the files or folders to restore", ErrUnsafePath)
	}
	for _, p := range paths {
		if err := s.CheckPath(p); err != nil {
			return nil, err
		}
	}
	s.objects.Forget()
	if !opts.DryRun {
		unlock, err := s.lockAndRecover(ctx)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	ref := id
	id, err := s.Resolve(ref)
	if err != nil {
		return nil, err
	}
	t, err := s.loadTarget(id)
	if err != nil {
		return nil, err
	}
	pos, err := s.readPosition()
	if err != nil {
		return nil, err
	}
	liveIgn, err := s.loadIgnore()
	if err != nil {
		return nil, err
	}
	r := walk.Rules{liveIgn, t.ignore}
	if opts.DryRun {
		c, err := s.captureLive(ctx, false)
		if err != nil {
			return nil, err
		}
		live, want, err := restore.SelectPaths(c.manifest(), t.entries, paths, id, true)
		if err != nil {
			return nil, err
		}
		if err := checkNames(id, want); err != nil {
			return nil, err
		}
		p := restore.NewPlan(live, want, r)
		return &PathsResult{RestoreResult: RestoreResult{Op: "restore", From: pos.Current, To: id, DryRun: true, Changes: nonNil(p.Changes), Kept: p.Kept, Elapsed: Duration(time.Since(start))}, Paths: paths}, nil
	}
	safety, c, err := s.checkpointLocked(ctx, fmt.Sprintf("before restore of %s from %s", describePaths(paths), id), KindSafety, true, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("safety checkpoint before restore (nothing was changed): %w", err)
	}
	_, want, err := restore.SelectPaths(c.manifest(), t.entries, paths, id, true)
	if err == nil {
		err = checkNames(id, want)
	}
	if err != nil {
		return nil, s.keepPosition(pos.Current, err)
	}
	j := &Journal{Op: "restore", OpID: objects.RandomHex(8), From: pos.Current, To: id, Safety: safety.ID, Time: time.Now().UTC(), Paths: paths}
	if err := s.writeJournal(j); err != nil {
		return nil, s.keepPosition(pos.Current, fmt.Errorf("write journal (nothing was changed): %w", err))
	}
	res, err := s.restorePathsLocked(ctx, j, t, r, c, false, "completed")
	if err != nil && errors.Is(err, ErrCorrupt) {
		// The checkpoint cannot be read: put the paths back now rather than leave them half
		// restored for the next command.
		if _, uerr := s.undoPathsLocked(ctx, j, r, false); uerr != nil && !errors.Is(uerr, ErrNotRecorded) {
			return nil, fmt.Errorf("%w; putting the paths back from the safety checkpoint %s failed too: %v (the journal is kept: the next agent-rewind command retries)", err, safety.ID, uerr)
		}
		return nil, fmt.Errorf("%w; the paths were put back from the safety checkpoint %s", err, safety.ID)
	}
	if res != nil {
		res.SafetyCreated, res.SafetyResult = !safety.Reused, safety
		res.Elapsed = Duration(time.Since(start))
	}
	return res, err
}

// restorePathsLocked applies a "restore" journal: plan the chosen paths against the live state
// (c, or a fresh hash-only capture when nil), apply, flush, then put the position back to
// j.From, remember the operation, record, and remove the journal. Errors before the flush leave
// the journal for recovery. Re-running it converges, as a rewind does.
func (s *Store) restorePathsLocked(ctx context.Context, j *Journal, t *target, r walk.Rules, c *capture, recovered bool, outcome string) (*PathsResult, error) {
	if c == nil {
		var err error
		if c, err = s.captureWith(ctx, r); err != nil {
			return nil, err
		}
	}
	// Not strict: a path the checkpoint lacks is gone once an interrupted run deleted it.
	live, want, err := restore.SelectPaths(c.manifest(), t.entries, j.Paths, j.To, false)
	if err != nil {
		return nil, err
	}
	p := restore.NewPlan(live, want, r)
	touched, kept, err := s.apply(ctx, &p, c)
	if err != nil && errors.Is(err, ErrCorrupt) {
		return nil, fmt.Errorf("restore from %s cannot read the checkpoint: %w", j.To, err) // the caller undoes it
	}
	if err != nil {
		return nil, fmt.Errorf("restore from %s stopped: %w (the journal is kept: the next agent-rewind command finishes it; the safety checkpoint %s holds the state before)", j.To, err, j.Safety)
	}
	res := &PathsResult{RestoreResult: RestoreResult{Op: "restore", OpID: j.OpID, From: j.From, To: j.To, Safety: j.Safety, Changes: nonNil(withoutKept(p.Changes, kept)), Kept: append(p.Kept, kept...)}, Paths: j.Paths}
	pos, err := s.readPosition()
	if err != nil {
		return nil, err
	}
	pos.Current = j.From
	pos.LastRestore = &Operation{Op: "restore", From: j.From, To: j.To, Safety: j.Safety, Time: time.Now().UTC()}
	if err := s.flushThenPosition(touched, pos, nil); err != nil {
		return nil, err
	}
	recErr := s.finishRecords() // the safety checkpoint's entry first
	if s.opts.Recorder != nil {
		seq, err := s.opts.Recorder.Record("restore", PathsRecord{OpID: j.OpID, Checkpoint: t.meta.ID, Paths: j.Paths, Position: j.From, Safety: j.Safety, Changed: len(res.Changes), Kept: len(res.Kept), Recovered: recovered, Outcome: outcome})
		if err != nil {
			recErr = errors.Join(recErr, fmt.Errorf("%w: restore %s from %s: %v", ErrNotRecorded, j.OpID, t.meta.ID, err))
		}
		res.ChainSeq = seq
	}
	if err := durable.Remove(s.journalPath()); err != nil && !os.IsNotExist(err) {
		return res, fmt.Errorf("remove journal: %w", err)
	}
	return res, recErr
}

// undoPathsLocked puts the chosen paths back from the journal's safety checkpoint (outcome
// "undone"): what a restore whose checkpoint cannot be read ends with.
func (s *Store) undoPathsLocked(ctx context.Context, j *Journal, r walk.Rules, recovered bool) (*PathsResult, error) {
	st, err := s.loadTarget(j.Safety)
	if err != nil {
		return nil, fmt.Errorf("read the safety checkpoint %s: %w", j.Safety, err)
	}
	return s.restorePathsLocked(ctx, j, st, append(r, st.ignore), nil, recovered, "undone")
}

// CheckPath refuses a path a restore must not be given: one that could leave the workspace
// (absolute, "..", empty segments, NUL) or that names the store. Callers that take paths from
// outside (the web UI) check them here, by the same rules.
func (s *Store) CheckPath(p string) error {
	if err := manifest.CheckPath(p); err != nil {
		return fmt.Errorf("%w: %q: %v: give a path relative to the workspace root %s, inside it", ErrUnsafePath, p, err, s.root)
	}
	for _, sr := range s.stateRel {
		if p == sr || strings.HasPrefix(p, sr+"/") || strings.HasPrefix(sr, p+"/") {
			return fmt.Errorf("%w: %q holds the store %s, which a restore never touches: name paths beside it", ErrUnsafePath, p, sr)
		}
	}
	return nil
}

// keepPosition puts the position back to cur after the safety checkpoint moved it: a restore of
// paths leaves the workspace where it was in the timeline.
func (s *Store) keepPosition(cur string, opErr error) error {
	pos, err := s.readPosition()
	if err == nil && pos.Current != cur {
		pos.Current = cur
		err = s.writePosition(pos)
	}
	if err != nil {
		if opErr != nil {
			return fmt.Errorf("%w; putting the position back to %s failed too: %v", opErr, cur, err)
		}
		return fmt.Errorf("write position: %w", err)
	}
	return opErr
}

// ThroughError is the ErrUnsafePath of a path p asked for below d, which is no folder but a t in
// where (the workspace, a checkpoint): no checkpoint holds a path below a symlink or a file.
func ThroughError(p, d string, t EntryType, where string) error {
	return restore.ThroughError(p, d, t, where)
}

// describePaths names the paths of a restore in a checkpoint label.
func describePaths(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return fmt.Sprintf("%s and %d more", paths[0], len(paths)-1)
}
