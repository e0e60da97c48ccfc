package command

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/snapshot"
)

// snapshotSession is the workspace's checkpoint store opened for one command, with what the
// command must do when it ends: clear the progress line, tell about a recovered rewind, close
// the chain.
type snapshotSession struct {
	env      *Env
	ws       *workspace.Workspace
	store    *snapshot.Store
	progress *progressLine
	told     *snapshot.Recovery // the recovery already reported on stderr
}

// openSnapshots opens the checkpoint store of the workspace (Env.choice). With create (checkpoint), the store
// is made on first use; without it (every other command), a workspace without a store fails
// with workspace.ErrNotInitialized and nothing is created. Opening finishes an interrupted
// rewind or replay, which is reported on stderr.
func openSnapshots(env *Env, create bool) (*snapshotSession, error) {
	open := workspace.Open
	if create {
		open = workspace.Init
	}
	root, err := env.root()
	if err != nil {
		return nil, err
	}
	ws, err := open(root)
	if err != nil {
		return nil, err
	}
	s := &snapshotSession{env: env, ws: ws, progress: newProgress(env.Stderr)}
	var report func(snapshot.Progress)
	if s.progress != nil {
		report = s.progress.report
	}
	if s.store, err = ws.Snapshots(report); err != nil {
		ws.Close()
		return nil, err
	}
	s.tellRecovery()
	return s, nil
}

// close ends the session; a writer may have recovered an interrupted rewind left by another
// process since the store was opened, which is reported too.
func (s *snapshotSession) close() {
	s.progress.clear()
	s.tellRecovery()
	s.ws.Close()
}

// done clears the progress line before the command prints its result.
func (s *snapshotSession) done() { s.progress.clear() }

// tellRecovery says on stderr that an interrupted rewind, replay or restore was finished, once.
func (s *snapshotSession) tellRecovery() {
	r := s.store.Recovered()
	if r == nil || r == s.told {
		return
	}
	s.told = r
	s.progress.clear()
	fmt.Fprintf(s.env.Stderr, "agent-rewind: %s\n", recoveryText(r))
}

// recoveryText describes a finished recovery.
func recoveryText(r *snapshot.Recovery) string {
	j := r.Journal
	var b strings.Builder
	switch {
	case j.Op == "restore" && r.Outcome == "undone":
		fmt.Fprintf(&b, "an interrupted restore of %s from %s (started %s) could not be finished, because that checkpoint could not be read; "+
			"those paths were put back from the safety checkpoint %s (%s changed)", strings.Join(j.Paths, ", "), j.To, localTime(j.Time), j.Safety, plural(r.Changes, "path", "paths"))
	case j.Op == "restore":
		fmt.Fprintf(&b, "an interrupted restore of %s from %s (started %s) was finished (%s changed by the recovery); "+
			"the state before it is checkpoint %s", strings.Join(j.Paths, ", "), j.To, localTime(j.Time), plural(r.Changes, "path", "paths"), j.Safety)
	case r.Outcome == "undone":
		fmt.Fprintf(&b, "an interrupted %s to %s (started %s) could not be finished, because its target could not be read; "+
			"it was undone: the workspace is back at the state before it, checkpoint %s (%s changed)",
			j.Op, j.To, localTime(j.Time), j.Safety, plural(r.Changes, "path", "paths"))
	default:
		fmt.Fprintf(&b, "an interrupted %s to %s (started %s) was finished: the workspace is now checkpoint %s (%s changed by the recovery); "+
			"the state before it is checkpoint %s", j.Op, j.To, localTime(j.Time), j.To, plural(r.Changes, "path", "paths"), j.Safety)
	}
	if r.NotRecorded != "" {
		fmt.Fprintf(&b, "; but it is not on the hash chain: %s (check it with \"agent-rewind chain verify\")", r.NotRecorded)
	}
	return b.String()
}

// failure is embedded in a --json result that comes with an error: the result holds, and the
// command still exits 1 (for example a checkpoint that is durable but not on the chain).
type failure struct {
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exitCode,omitempty"`
}

// emitResult prints a result that may come with an error (opErr): the result is printed in
// full, then the command fails with exit 1. With --json the error is inside the one document
// (f), so nothing else is printed; in text it goes to stderr.
func emitResult(env *Env, v any, f *failure, opErr error, text func(io.Writer) error) error {
	if opErr != nil {
		opErr = explainPartial(opErr)
		f.Error, f.ExitCode = opErr.Error(), 1
	}
	if err := env.Emit(v, text); err != nil {
		return err
	}
	if opErr == nil {
		return nil
	}
	return &ExitError{Code: 1, Err: opErr, Silent: env.JSON}
}

// explainPartial says what to do about an error that came after the result was made durable.
func explainPartial(err error) error {
	if errors.Is(err, snapshot.ErrNotRecorded) {
		return fmt.Errorf("%w; the result above is saved and in effect, only its chain entry is missing: "+
			"repair the chain (\"agent-rewind chain verify\" says what is wrong) and later operations are recorded again", err)
	}
	return fmt.Errorf("%w (the result above is durable and in effect)", err)
}

// resolveError turns an ambiguous id prefix into a list of the candidates a person can choose
// from (id, time, kind, label); with --json it prints the failure document with a "candidates"
// member itself. Other errors pass unchanged.
func (s *snapshotSession) resolveError(err error) error {
	var amb *snapshot.AmbiguousError
	if !errors.As(err, &amb) {
		return err
	}
	cands := make([]candidate, 0, len(amb.Candidates))
	for _, id := range amb.Candidates {
		c := candidate{ID: id}
		if cp, gerr := s.store.Get(id); gerr == nil {
			c.Time, c.Kind, c.Label = cp.Time, string(cp.Kind), cp.Label
		}
		cands = append(cands, c)
	}
	e := &ambiguousError{err: amb, candidates: cands}
	if !s.env.JSON {
		return e
	}
	if err := s.env.Emit(struct {
		Error      string      `json:"error"`
		ExitCode   int         `json:"exitCode"`
		Candidates []candidate `json:"candidates"`
	}{e.Error(), 1, cands}, nil); err != nil {
		return err
	}
	return &ExitError{Code: 1, Err: e, Silent: true}
}

// candidate is one checkpoint an ambiguous prefix could mean.
type candidate struct {
	ID    string    `json:"id"`
	Time  time.Time `json:"time,omitzero"`
	Kind  string    `json:"kind,omitempty"`
	Label string    `json:"label,omitempty"`
}

// ambiguousError lists the candidates of an ambiguous prefix, one a line.
type ambiguousError struct {
	err        *snapshot.AmbiguousError
	candidates []candidate
}

// Error names the prefix and lists the candidates.
func (e *ambiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checkpoint id %q is ambiguous; give more characters of one of:", e.err.Prefix)
	for _, c := range e.candidates {
		fmt.Fprintf(&b, "\n  %s  %s  %-6s  %s", c.ID, localTime(c.Time), c.Kind, c.Label)
	}
	return b.String()
}

// Unwrap returns the module's *snapshot.AmbiguousError (errors.Is(err, snapshot.ErrAmbiguous)).
func (e *ambiguousError) Unwrap() error { return e.err }
