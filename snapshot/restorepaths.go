package snapshot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
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
	Position   string   `json:"position"` // the position, which a restore of paths does not move
	Safety     string   `json:"safety"`   // the checkpoint holding the state before
	Changed    int      `json:"changed"`  // paths changed
	Kept       int      `json:"kept"`     // paths left alone
}

// RestorePaths makes the chosen paths (and everything under them) equal to their state in
// checkpoint id, and leaves every other path and the position alone. A path the checkpoint does
// not have is deleted. It follows a rewind's rules: a safety checkpoint of the whole workspace
// first (kind "safety", a side branch: the position stays), nothing written through a symlink or
// outside the workspace, live paths not captured never touched; then a "restore" chain entry.
// Paths are workspace-relative and slash-separated (as in a manifest). Unlike a rewind it keeps
// no journal: each file is replaced whole (rename), so a kill leaves some chosen paths restored
// and the others as they were, and the safety checkpoint holds the state before.
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
	s.objects.forget()
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
	r := rules{liveIgn, t.ignore}
	res := &PathsResult{RestoreResult: RestoreResult{Op: "restore", From: pos.Current, To: id, DryRun: opts.DryRun}, Paths: paths}
	var c *capture
	if opts.DryRun {
		if c, err = s.captureLive(ctx, false); err != nil {
			return nil, err
		}
	} else {
		safety, sc, err := s.checkpointLocked(ctx, fmt.Sprintf("before restore of %s from %s", describePaths(paths), id), KindSafety, true, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("safety checkpoint before restore (nothing was changed): %w", err)
		}
		c = sc
		res.Safety, res.SafetyCreated, res.SafetyResult = safety.ID, !safety.Reused, safety
	}
	live, want, err := selectPaths(c.manifest(), t.entries, paths, id)
	if err != nil {
		if !opts.DryRun {
			err = s.keepPosition(pos.Current, err)
		}
		return nil, err
	}
	p := planRestore(live, want, r)
	if opts.DryRun {
		res.Changes, res.Kept, res.Elapsed = nonNil(p.changes), p.kept, Duration(time.Since(start))
		return res, nil
	}
	touched, kept, err := s.apply(ctx, &p, c)
	if err == nil {
		err = s.flushRestored(touched)
	}
	if err != nil {
		return nil, s.keepPosition(pos.Current, fmt.Errorf("restore from %s stopped: %w (the paths not yet restored are as they were; the safety checkpoint %s holds the state before)", id, err, res.Safety))
	}
	res.Changes, res.Kept = nonNil(withoutKept(p.changes, kept)), append(p.kept, kept...)
	if err := s.keepPosition(pos.Current, nil); err != nil {
		return nil, err
	}
	res.OpID = randomHex(8)
	res.Elapsed = Duration(time.Since(start))
	if s.opts.Recorder != nil {
		seq, err := s.opts.Recorder.Record("restore", PathsRecord{OpID: res.OpID, Checkpoint: id, Paths: paths, Position: pos.Current, Safety: res.Safety, Changed: len(res.Changes), Kept: len(res.Kept)})
		if err != nil {
			return res, fmt.Errorf("%w: restore %s from %s: %v", ErrNotRecorded, res.OpID, id, err)
		}
		res.ChainSeq = seq
	}
	return res, nil
}

// CheckPath refuses a path a restore must not be given: one that could leave the workspace
// (absolute, "..", empty segments, NUL) or that names the store. Callers that take paths from
// outside (the web UI) check them here, by the same rules.
func (s *Store) CheckPath(p string) error {
	if err := checkPath(p); err != nil {
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

// selectPaths returns the live and target entries a restore of paths compares: each path and
// everything under it, plus the live folders on their way (unchanged, so never touched) or, where
// the workspace lacks one, the checkpoint's (created). A path in neither state, or a live
// non-folder where a folder must be, is refused before anything is written.
func selectPaths(live, want []Entry, paths []string, id string) ([]Entry, []Entry, error) {
	chosen := func(p string) bool {
		for _, q := range paths {
			if p == q || strings.HasPrefix(p, q+"/") {
				return true
			}
		}
		return false
	}
	find := func(es []Entry, p string) *Entry {
		i, ok := slices.BinarySearchFunc(es, p, func(e Entry, p string) int { return strings.Compare(e.Path, p) })
		if !ok {
			return nil
		}
		return &es[i]
	}
	var l, w []Entry
	for _, e := range live {
		if chosen(e.Path) {
			l = append(l, e)
		}
	}
	for _, e := range want {
		if chosen(e.Path) {
			w = append(w, e)
		}
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if find(live, p) == nil && find(want, p) == nil {
			return nil, nil, fmt.Errorf("%w: %q is neither in checkpoint %s nor in the workspace (paths are relative to the workspace root; see agent-rewind diff %s)", ErrNotFound, p, id, id)
		}
		for i := 0; i < len(p); i++ {
			if p[i] != '/' || seen[p[:i]] || chosen(p[:i]) {
				continue
			}
			d := p[:i]
			seen[d] = true
			switch le, te := find(live, d), find(want, d); {
			case le != nil && le.Type == TypeDir:
				l, w = append(l, *le), append(w, *le)
			case le != nil:
				return nil, nil, fmt.Errorf("%w: %s is a %s in the workspace, where restoring %s needs a folder: restore %s itself, or move it away", ErrUnsafePath, d, le.Type, p, d)
			case te != nil:
				w = append(w, *te)
			}
		}
	}
	byPath := func(a, b Entry) int { return strings.Compare(a.Path, b.Path) }
	slices.SortFunc(l, byPath)
	slices.SortFunc(w, byPath)
	return l, w, nil
}

// describePaths names the paths of a restore in a checkpoint label.
func describePaths(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return fmt.Sprintf("%s and %d more", paths[0], len(paths)-1)
}
