package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/commitlog"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Recorder appends an entry to the hash chain. data marshals with encoding/json to a JSON object;
// seq is the entry's sequence number. The store calls Record while holding its own lock, only
// after what it records is durable (see FORMAT.md, "Chain records").
type Recorder interface {
	Record(kind string, data any) (seq int64, err error)
}

// Intender is implemented by a Recorder that keeps the chain complete across a crash between a
// commit and its record (FORMAT.md, "Chain records"): before writing content to file, which
// commits a checkpoint, the store calls Intend, which notes the entry durably; after the commit
// it calls record (which appends the entry and clears the note), or drop when the commit did
// not happen. A note left by a killed process is recorded late by the next writer.
type Intender interface {
	Intend(kind string, data any, file string, content []byte) (record func() (int64, error), drop func(), err error)
}

// Progress is a snapshot of a long operation's progress, passed to Options.Progress.
type Progress struct {
	Phase string // "scan", "hash", "restore"
	Done  int64  // entries seen ("scan"), files hashed ("hash"), changes applied ("restore")
	Total int64  // the number expected, 0 when unknown ("scan")
	Bytes int64  // bytes hashed so far ("hash")
}

// Options configures a Store. The zero value is usable.
type Options struct {
	// StateDir holds the store (FORMAT.md); default root/.rewind. It is always excluded from
	// checkpoints and never touched by a restore.
	StateDir string
	// Recorder receives a chain entry for every checkpoint, rewind and replay; nil records nothing.
	Recorder Recorder
	// Parallelism bounds the goroutines that walk, hash and write restored files; default
	// GOMAXPROCS.
	Parallelism int
	// Progress, when set, is called from one goroutine about every ProgressInterval during a long
	// operation, and once at the end of each phase.
	Progress func(Progress)
	// ProgressInterval is the time between Progress calls; default 200ms.
	ProgressInterval time.Duration
	// Lock takes the writers' lock for the duration of Checkpoint, Rewind, Replay, GC and journal
	// recovery; nil means an exclusive flock(2) on StateDir/lock. flock conflicts between two
	// descriptors of one process too: a caller that already holds StateDir/lock through its own
	// descriptor must pass a Lock that returns a no-op unlock, or it deadlocks.
	Lock func() (unlock func() error, err error)
	// SyncLater, when set, takes over the fsync of the calls log after a tool call's note is
	// appended (FORMAT.md, "Tool calls"): the note is written before the call returns, so a
	// killed process loses nothing, and SyncLater must make the file durable within a bound it
	// documents, a group commit (the guard server's is 100 ms). The checkpoint a note names is
	// durable before the note is written. nil syncs the note before returning.
	SyncLater func(path string)
	// NoCommitLog makes every checkpoint sync each file it writes, as a rewind's safety
	// checkpoint does, instead of committing through the commit log (FORMAT.md, "Commit log").
	NoCommitLog bool
}

// Store is a workspace's snapshot store. Its methods may be called from several goroutines and
// processes: writers serialise on the lock, readers rely on files being replaced atomically.
type Store struct {
	root      string   // absolute, symlinks resolved
	state     string   // absolute state directory
	stateRel  []string // the state directory relative to root, as given and resolved (none when outside)
	opts      Options
	objects   *objects.Store
	recovered atomic.Pointer[Recovery]
	// boot is this boot's id where the system tells it (Linux), else "": the commit log's
	// records are read back only by a later boot (commitlog.go).
	boot string
	// pendingRecord, under the lock, waits for a chain entry recorded in the background (a
	// rewind's safety checkpoint: commitLogged) and returns its error (finishRecords).
	pendingRecord func() error
	// cleaned: the leftovers of interrupted writers were removed under the lock now held
	// (cleanLeftovers); each new hold of the lock starts without.
	cleaned bool
	// beforeApply, set by tests only, runs when a restore starts changing the workspace (after
	// its safety checkpoint and journal): what a tool writing into the workspace meanwhile does.
	beforeApply func()
}

// Recovery describes an interrupted rewind or replay that Open (or a later writer) finished.
type Recovery struct {
	Journal Journal `json:"journal"`
	Outcome string  `json:"outcome"` // "completed" (now at Journal.To) or "undone" (at Journal.Safety)
	Changes int     `json:"changes"` // paths changed by the recovery
	// NotRecorded is set when the recovery's chain entry could not be recorded: the workspace is
	// recovered, the chain lacks the entry (an ErrNotRecorded message).
	NotRecorded string `json:"notRecorded,omitempty"`
}

// Open opens the store of the workspace at root, creating the state directory on first use, and
// recovers an interrupted rewind or replay (see Recovered). If that recovery fails, Open returns
// a *RecoveryError and no store: nothing else may run until it is resolved.
func Open(root string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", root, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w (pass an existing folder)", root, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("workspace %q is not a directory (pass an existing folder)", root)
	}
	s := &Store{root: abs, opts: opts}
	if s.opts.Parallelism <= 0 {
		s.opts.Parallelism = runtime.GOMAXPROCS(0)
	}
	if s.opts.ProgressInterval <= 0 {
		s.opts.ProgressInterval = 200 * time.Millisecond
	}
	s.state = opts.StateDir
	if s.state == "" {
		s.state = filepath.Join(abs, ".rewind")
	}
	if s.state, err = filepath.Abs(s.state); err != nil {
		return nil, err
	}
	lexical := s.state
	for _, d := range []string{"", "objects", "packs", "manifests", "checkpoints"} {
		if err := os.MkdirAll(filepath.Join(s.state, d), 0o700); err != nil {
			return nil, fmt.Errorf("create state directory: %w", err)
		}
	}
	// Resolve symlinks in the state directory too, so "inside the root" is decided on real paths.
	if real, err := filepath.EvalSymlinks(s.state); err == nil {
		s.state = real
	}
	// A state directory reached through a symlink (root/.rewind -> elsewhere) excludes the link too.
	for _, st := range []string{lexical, s.state} {
		rel, err := filepath.Rel(abs, st)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			continue
		}
		if rel == "." {
			return nil, fmt.Errorf("state directory %s is the workspace root itself: choose a folder inside or outside it", st)
		}
		if rel = filepath.ToSlash(rel); !slices.Contains(s.stateRel, rel) {
			s.stateRel = append(s.stateRel, rel)
		}
	}
	s.objects = objects.New(s.state)
	if !opts.NoCommitLog {
		s.boot, _ = bootID()
	}
	// After a restart, the commit log's records are written back before anything reads the
	// files they hold, which a power cut may have lost.
	if _, done := logCaughtUp.Load(s.state + "\x00" + s.boot); s.boot != "" && !done {
		logBoot, err := commitlog.HeaderBoot(filepath.Join(s.state, logFile))
		if err != nil {
			return nil, err
		}
		if logBoot == "" || logBoot == s.boot {
			logCaughtUp.Store(s.state+"\x00"+s.boot, true)
		} else {
			unlock, err := s.lock()
			if err != nil {
				return nil, err
			}
			err = s.catchUpLog()
			unlock()
			if err != nil {
				return nil, err
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(s.state, "journal")); err == nil {
		unlock, err := s.lock()
		if err != nil {
			return nil, err
		}
		err = s.recoverLocked(context.Background())
		unlock()
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Root returns the workspace root (absolute, symlinks resolved).
func (s *Store) Root() string { return s.root }

// StateDir returns the state directory (absolute).
func (s *Store) StateDir() string { return s.state }

// Recovered returns what the last journal recovery done by this Store finished, or nil.
func (s *Store) Recovered() *Recovery { return s.recovered.Load() }

// lock takes the writers' lock.
func (s *Store) lock() (func() error, error) {
	if s.opts.Lock != nil {
		return s.opts.Lock()
	}
	return platform.Lock(filepath.Join(s.state, "lock"))
}

// lockAndRecover takes the writers' lock, finishes an interrupted restore if a journal is there
// (another process may have crashed after this Store was opened), and empties objects/tmp.
func (s *Store) lockAndRecover(ctx context.Context) (func() error, error) {
	return s.lockAndRecoverWith(ctx, s.lock)
}

// lockAndRecoverWith is lockAndRecover with the lock taken by take (a try: tryLock).
func (s *Store) lockAndRecoverWith(ctx context.Context, take func() (func() error, error)) (func() error, error) {
	unlock, err := s.lockRecoveredWith(ctx, take)
	if err != nil {
		return nil, err
	}
	if err := s.settleLog(); err != nil { // this writer's files are synced its own way
		unlock()
		return nil, err
	}
	if err := s.cleanLeftovers(); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// lockRecovered is lockAndRecover without the clean-up of leftovers, for a checkpoint, which may
// find nothing to write (an unchanged workspace with the watcher's hint): checkpointLocked
// cleans them before its first write.
func (s *Store) lockRecovered(ctx context.Context) (func() error, error) {
	return s.lockRecoveredWith(ctx, s.lock)
}

func (s *Store) lockRecoveredWith(ctx context.Context, take func() (func() error, error)) (func() error, error) {
	release, err := take()
	if err != nil {
		return nil, err
	}
	unlock := func() error {
		s.finishRecords() // a caller that did not wait has returned its result: the note stays
		return release()
	}
	s.objects.Forget()
	s.cleaned = false
	if err := s.recoverLocked(ctx); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// cleanLeftovers removes what interrupted writers left (objects/tmp, which also stages the
// manifests' and checkpoints' files; packs/; the state directory's temporary files of the
// position, the stat cache and the calls log), and gives a pack whose index is lost its index
// back (cleanPacks), once per hold of the lock (under it).
func (s *Store) cleanLeftovers() error {
	if s.cleaned {
		return nil
	}
	s.cleaned = true
	if err := s.objects.CleanTmp(); err != nil {
		return fmt.Errorf("clean %s: %w", s.objects.TmpDir(), err)
	}
	if err := s.objects.CleanPacks(); err != nil {
		return fmt.Errorf("clean %s: %w", filepath.Join(s.state, "packs"), err)
	}
	names, err := platform.ReadDirNames(s.state)
	if err != nil {
		return fmt.Errorf("clean %s: %w", s.state, err)
	}
	for _, n := range names {
		if lockedTemp(n) {
			if err := os.Remove(filepath.Join(s.state, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("clean %s: %w", s.state, err)
			}
		}
	}
	return nil
}

// lockedTemps are the prefixes of the temporary files this module writes in the state directory,
// always under the lock: a writer holding it removes what a crash left. (Other modules write
// their own temporary files there under their own locks: those are not this module's to remove.)
var lockedTemps = []string{".tmp-position-", ".tmp-index-", ".tmp-" + callsFile + "-"}

func lockedTemp(name string) bool {
	return slices.ContainsFunc(lockedTemps, func(p string) bool { return strings.HasPrefix(name, p) })
}

// loadIgnore reads the live .rewindignore (absent means no rules).
func (s *Store) loadIgnore() (*Ignore, error) {
	name := filepath.Join(s.root, IgnoreFile)
	st, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil // a directory or symlink named .rewindignore is captured, not obeyed
	}
	b, err := regular.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return ParseIgnore(b), nil
}

// progress runs a reporter that calls Options.Progress every interval with what get returns; the
// returned stop function reports once more and stops it.
func (s *Store) progress(phase string, get func() Progress) (stop func()) {
	if s.opts.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(s.opts.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p := get()
				p.Phase = phase
				s.opts.Progress(p)
			case <-done:
				return
			}
		}
	}()
	var once atomic.Bool
	return func() {
		if once.Swap(true) {
			return
		}
		close(done)
		<-finished
		p := get()
		p.Phase = phase
		s.opts.Progress(p)
	}
}
