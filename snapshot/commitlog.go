package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/commitlog"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// The commit log (FORMAT.md, "Commit log") makes a checkpoint durable with one sync: its
// record holds every file the checkpoint writes, which are then written without a sync. Only
// checkpoints use it; every other writer settles it first (settleLog), and so does every
// durable write of the position (stagePosition: a rewind's, after its logged safety
// checkpoint), so that the log's records are the only writes since the files were last synced,
// in order, and a replay after a power cut (catchUpLog) can write them all again.

const (
	logFile = "log"
	// logSettleSize is the log's size past which a checkpoint settles it before appending: the
	// log is replayed whole after a restart, and settled whole by the next other writer.
	logSettleSize = 2 << 20
	// logPackMax bounds a pack that goes through the log (a checkpoint of bigger new contents
	// writes them twice otherwise): such a checkpoint syncs its files as before.
	logPackMax = 4 << 20
)

// bootID is commitlog.BootID, read once per process (the boot cannot change under it),
// replaced by tests that simulate a restart.
var bootID = sync.OnceValues(commitlog.BootID)

// logCaughtUp holds the state directories whose log this process found written in this boot
// (or replayed): no log written before it can appear there later, so Open looks only once per
// process (the guard server opens a store per call).
var logCaughtUp sync.Map

// LogIntender is an Intender whose note can be made durable by the store's commit log instead of
// its own sync: IntendLogged writes the note without a sync and returns its name and content,
// which the store puts in the checkpoint's record (so that a replay after a power cut writes the
// note back, and the Recorder records the entry late if the chain lacks it).
type LogIntender interface {
	Intender
	IntendLogged(kind string, data any, file string, content []byte) (note string, noteContent []byte, record func() (int64, error), drop func(), err error)
}

// logs reports whether this store's checkpoints go through the commit log: where the boot is
// known (Linux), unless Options.NoCommitLog, and with a Recorder whose notes it can carry.
func (s *Store) logs() bool {
	if s.boot == "" || s.opts.NoCommitLog {
		return false
	}
	_, isI := s.opts.Recorder.(Intender)
	_, isLI := s.opts.Recorder.(LogIntender)
	return !isI || isLI
}

// openLog opens the commit log, or returns nil where none is used. create: create it if it is
// missing (else a missing or empty log is nil: nothing to do).
func (s *Store) openLog(create bool) (*commitlog.Log, error) {
	if s.boot == "" {
		return nil, nil
	}
	name := filepath.Join(s.state, logFile)
	if !create {
		if st, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() <= int64(commitlog.HeaderSize)) {
			return nil, nil
		}
	}
	l, err := commitlog.Open(name, s.boot)
	if err != nil {
		return nil, fmt.Errorf("open the commit log: %w", err)
	}
	return l, nil
}

// catchUpLog makes the files match the log, under the lock: after a restart (the log's boot is
// not this one) it writes every record's files again and settles the log; in the same boot it
// finishes the last record if its writer was killed between the log's sync and the position.
func (s *Store) catchUpLog() error {
	l, err := s.openLog(false)
	if l == nil || err != nil {
		return err
	}
	defer l.Close()
	if l.Boot() != s.boot {
		recs, err := l.Records()
		if err != nil {
			return fmt.Errorf("read the commit log: %w", err)
		}
		for _, r := range recs {
			if err := s.materialise(r); err != nil {
				return err
			}
		}
		return s.settle(l)
	}
	// The position is a record's last file, put in place last: the common case (the last
	// checkpoint finished) reads only its bytes, not the record's pack.
	if have, err := regular.ReadFile(filepath.Join(s.state, "position")); err == nil {
		if done, err := l.LastEndsWith(commitlog.File{Name: "position", Data: have}); err != nil || done {
			return err
		}
	}
	last, ok, err := l.Last()
	if err != nil || !ok {
		return err
	}
	return s.materialise(last)
}

// settleLog makes every file the log holds durable and empties it: for every writer but a
// checkpoint, before its first write.
func (s *Store) settleLog() error {
	if err := s.catchUpLog(); err != nil {
		return err
	}
	l, err := s.openLog(false)
	if l == nil || err != nil {
		return err
	}
	defer l.Close()
	return s.settle(l)
}

// settle syncs the files of l's records and their folders, then resets l.
func (s *Store) settle(l *commitlog.Log) error {
	recs, err := l.Records()
	if err != nil {
		return fmt.Errorf("read the commit log: %w", err)
	}
	var files, dirs []string
	seen := map[string]bool{}
	for _, r := range recs {
		for _, f := range r.Files {
			name := filepath.Join(s.state, filepath.FromSlash(f.Name))
			if !seen[name] {
				seen[name] = true
				files = append(files, name)
			}
			if d := filepath.Dir(name); !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	// Each file is fsynced, concurrently, never with syncfs(2), which would wait for every other
	// writer's data on the file system too (a rewind settles the log right after an agent's
	// edits). A note removed since (its entry recorded) is skipped: FsyncAll passes over missing
	// files.
	err = objects.FsyncAll(files, openToSettle)
	if err == nil {
		err = objects.FsyncAll(dirs, platform.OpenToFlush)
	}
	if err != nil {
		return fmt.Errorf("settle the commit log: %w", err)
	}
	if err := l.Reset(s.boot); err != nil {
		return fmt.Errorf("settle the commit log: %w", err)
	}
	return nil
}

// openToSettle opens a file the log names as the store reads it (regular.Open: never a FIFO's
// open that blocks, never through a symlink); one that is no longer a regular file (replaced by
// hand) has nothing to flush: check reports it, and the reads that need it fail naming it.
func openToSettle(name string) (*os.File, error) {
	f, err := regular.Open(name)
	if errors.Is(err, regular.ErrNotRegular) {
		return nil, nil
	}
	return f, err
}

// materialise writes a record's files, in order, without a sync (the log holds them).
func (s *Store) materialise(r commitlog.Record) error {
	if err := os.MkdirAll(s.objects.TmpDir(), 0o700); err != nil {
		return err
	}
	for _, f := range r.Files {
		name := filepath.Join(s.state, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			return err
		}
		tmp := s.objects.TmpDir()
		if f.Name == "position" {
			tmp = s.state // beside it, as stagePosition: .tmp-position-*
		}
		if err := durable.WriteFileUnsyncedIn(tmp, name, f.Data, 0o600); err != nil {
			return fmt.Errorf("write %s back from the commit log: %w", f.Name, err)
		}
	}
	s.objects.Forget()
	return nil
}

// logged is what checkpointLocked hands the logged commit: the checkpoint's parts, all staged.
type logged struct {
	pack      *objects.Logged
	root      []byte // the manifest's root, nil when the manifest is stored already
	mname     string
	cp        *Checkpoint
	cpBytes   []byte
	pos       *position
	saveCache func() error
	call      *ToolCall
}

// commitLogged commits a checkpoint through the log: the note, one record synced once, then the
// pack's index, the manifest, the checkpoint's file and the position, unsynced, in that order;
// then the stat cache, the calls log and the chain, as the synced path does. ok is false when
// this store does not log (nothing was written: commit the synced way).
func (s *Store) commitLogged(res *CheckpointResult, g logged) error {
	l, err := s.openLog(true)
	if err != nil {
		return err
	}
	defer l.Close()
	switch {
	case l.Size() > logSettleSize:
		if err := s.settle(l); err != nil {
			return err
		}
	case l.Boot() != s.boot && l.Empty():
		if err := l.Reset(s.boot); err != nil {
			return err
		}
	case l.Boot() != s.boot:
		return fmt.Errorf("the commit log holds records of an earlier boot that were not written back: run agent-rewind check")
	}
	rel := func(name string) string { r, _ := filepath.Rel(s.state, name); return filepath.ToSlash(r) }
	var rec commitlog.Record
	if g.pack.ID != "" {
		rec.Files = append(rec.Files, commitlog.File{Name: g.pack.PackName(), Data: g.pack.Pack}, commitlog.File{Name: g.pack.IdxName(), Data: g.pack.Idx})
	}
	if g.root != nil {
		rec.Files = append(rec.Files, commitlog.File{Name: rel(g.mname), Data: g.root})
	}
	cname := filepath.Join(s.state, "checkpoints", g.cp.ID)
	rec.Files = append(rec.Files, commitlog.File{Name: rel(cname), Data: g.cpBytes})
	data := g.cp.record()
	record, drop := func() (int64, error) { return 0, nil }, func() {}
	switch li, isLI := s.opts.Recorder.(LogIntender); {
	case isLI:
		note, content, r, d, err := li.IntendLogged("checkpoint", data, cname, g.cpBytes)
		if err != nil {
			return fmt.Errorf("checkpoint not taken: %w", err)
		}
		record, drop = r, d
		if n := rel(note); filepath.IsLocal(n) && path.Clean(n) == n {
			rec.Files = append(rec.Files, commitlog.File{Name: n, Data: content})
		}
	case s.opts.Recorder != nil:
		r := s.opts.Recorder
		record = func() (int64, error) { return r.Record("checkpoint", data) }
	}
	posBytes := encodePosition(g.pos)
	rec.Files = append(rec.Files, commitlog.File{Name: "position", Data: posBytes})
	if testHookLogged != nil {
		testHookLogged("before append")
	}
	if err := l.Append(rec); err != nil {
		drop()
		return fmt.Errorf("checkpoint not taken: write the commit log: %w", err)
	}
	res.Checkpoint = *g.cp
	if testHookLogged != nil {
		testHookLogged("after append")
	}
	// Committed: what follows only puts the files where readers look. A failure here leaves
	// the record to the next writer (catchUpLog), so the checkpoint stands.
	placed := func() error {
		if err := g.pack.Publish(); err != nil {
			return err
		}
		if g.root != nil {
			if err := durable.WriteFileUnsyncedIn(s.objects.TmpDir(), g.mname, g.root, 0o600); err != nil {
				return err
			}
		}
		if err := durable.WriteFileUnsyncedIn(s.objects.TmpDir(), cname, g.cpBytes, 0o600); err != nil {
			return err
		}
		return durable.WriteFileUnsyncedIn(s.state, filepath.Join(s.state, "position"), posBytes, 0o600)
	}()
	if placed != nil {
		return fmt.Errorf("checkpoint %s committed in the commit log, but writing its files failed (the next command writes them): %w", g.cp.ID, placed)
	}
	var noted chan error
	if g.call != nil {
		noted = make(chan error, 1)
		go func() {
			noted <- s.appendCall(CallRecord{ToolCall: *g.call, Checkpoint: g.cp.ID, Time: time.Now().UTC()})
		}()
	}
	indexErr := g.saveCache() // a cache, written once all it names exists
	if g.cp.Kind == KindSafety && s.opts.Recorder != nil {
		// A rewind's safety checkpoint is recorded while the rewind goes on (its journal, the
		// target's trees): the rewind's own entry waits for it (finishRecords), so the chain's
		// order stays the commits' order, and a crash meanwhile leaves the note to record late.
		done := make(chan error, 1)
		go func() {
			seq, err := record()
			res.ChainSeq = seq
			done <- err
		}()
		id := g.cp.ID
		s.pendingRecord = func() error {
			if err := <-done; err != nil {
				return fmt.Errorf("%w: checkpoint %s: %v", ErrNotRecorded, id, err)
			}
			return nil
		}
		return indexErr
	}
	var recErr error
	if s.opts.Recorder != nil {
		res.ChainSeq, recErr = record()
	}
	if noted != nil {
		if err := <-noted; err != nil && indexErr == nil {
			indexErr = fmt.Errorf("checkpoint %s taken, but the tool call %s could not be noted in %s: %w", g.cp.ID, g.call.ID, callsFile, err)
		}
	}
	if recErr != nil {
		return fmt.Errorf("%w: checkpoint %s: %v", ErrNotRecorded, g.cp.ID, recErr)
	}
	return indexErr
}

// finishRecords waits for a chain entry still being recorded (a safety checkpoint's) and
// returns its error: before any other entry is recorded, and before the lock is let go.
func (s *Store) finishRecords() error {
	wait := s.pendingRecord
	if wait == nil {
		return nil
	}
	s.pendingRecord = nil
	return wait()
}

// testHookLogged, set by tests only, runs at the steps of a logged commit.
var testHookLogged func(step string)

// encodePosition is the position file's content.
func encodePosition(p *position) []byte {
	p.Format = 1
	b, _ := json.Marshal(p)
	return append(b, '\n')
}
