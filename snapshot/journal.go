package snapshot

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agent-rewind/rewind/snapshot/internal/journal"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// Journal is the content of StateDir/journal: a rewind or replay in flight (FORMAT.md, "Journal").
type Journal = journal.Journal

func (s *Store) journalPath() string { return filepath.Join(s.state, "journal") }

// readJournal returns the journal, or nil when no operation is in flight.
func (s *Store) readJournal() (*Journal, error) { return journal.Read(s.journalPath(), validID) }

func (s *Store) writeJournal(j *Journal) error { return journal.Write(s.journalPath(), j) }

// recoverLocked finishes an interrupted rewind or replay; the caller holds the lock. It re-runs
// the restore to the journal's target, comparing the live workspace with it, so whatever the
// interrupted run had done, the workspace ends equal to the target. When the target cannot be
// read (its metadata, manifest or any object: missing, damaged, or failing to read for any
// reason) it restores the safety checkpoint instead (outcome "undone").
func (s *Store) recoverLocked(ctx context.Context) error {
	j, err := s.readJournal()
	if err != nil || j == nil {
		return err
	}
	// A rewind or replay is redone to its target; a restore of chosen paths (restorepaths.go)
	// to its checkpoint, for those paths alone. Either is undone to the safety checkpoint when
	// what it restores cannot be read.
	redo := func(t *target, r walk.Rules) (int, error) {
		res, err := s.restoreLocked(ctx, j, t, r, nil, true, "completed")
		return changesOf(res), err
	}
	undo := func(r walk.Rules) (int, error) {
		res, err := s.undoLocked(ctx, j, r, true)
		return changesOf(res), err
	}
	what := "the target"
	if j.Op == "restore" {
		redo = func(t *target, r walk.Rules) (int, error) {
			res, err := s.restorePathsLocked(ctx, j, t, r, nil, true, "completed")
			return pathChangesOf(res), err
		}
		undo = func(r walk.Rules) (int, error) {
			res, err := s.undoPathsLocked(ctx, j, r, true)
			return pathChangesOf(res), err
		}
		what = "the checkpoint"
	}
	s.objects.Forget()
	if err := s.objects.CleanTmp(); err != nil {
		return &RecoveryError{Journal: *j, Err: err}
	}
	// Paths excluded by the pre-operation rules stay untouched even if the interrupted run had
	// already restored the target's .rewindignore: take the rules of all three states.
	live, err := s.loadIgnore()
	if err != nil {
		return &RecoveryError{Journal: *j, Err: err}
	}
	r := walk.Rules{live}
	if safety, err := s.loadTarget(j.Safety); err == nil {
		r = append(r, safety.ignore)
	}
	outcome := "completed"
	var changes int
	t, terr := s.loadTarget(j.To)
	if terr == nil {
		changes, err = redo(t, append(r, t.ignore))
	}
	if terr != nil || (err != nil && errors.Is(err, ErrCorrupt)) {
		cause := terr
		if cause == nil {
			cause = err
		}
		outcome = "undone"
		if t != nil {
			r = append(r, t.ignore)
		}
		if changes, err = undo(r); err != nil && !errors.Is(err, ErrNotRecorded) {
			err = fmt.Errorf("%s cannot be read (%v), and restoring the safety checkpoint failed too: %w", what, cause, err)
		}
	}
	if err != nil && !errors.Is(err, ErrNotRecorded) {
		return &RecoveryError{Journal: *j, Err: err}
	}
	rec := &Recovery{Journal: *j, Outcome: outcome, Changes: changes}
	if err != nil {
		rec.NotRecorded = err.Error()
	}
	s.recovered.Store(rec)
	return nil
}

// changesOf and pathChangesOf count a restore's changes; nil (nothing done) is none.
func changesOf(r *RestoreResult) int {
	if r == nil {
		return 0
	}
	return len(r.Changes)
}

func pathChangesOf(r *PathsResult) int {
	if r == nil {
		return 0
	}
	return len(r.Changes)
}
