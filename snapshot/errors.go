package snapshot

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/restore"
)

// Sentinel errors, matchable with errors.Is. Most errors carry more detail in a typed error that
// wraps or matches one of these.
var (
	// ErrNotFound: no checkpoint has the given id or prefix.
	ErrNotFound = errors.New("no such checkpoint")
	// ErrNoSuchPath: a path asked for is neither in the checkpoint nor in the workspace.
	ErrNoSuchPath = restore.ErrNoSuchPath
	// ErrAmbiguous: an id prefix names more than one checkpoint (see *AmbiguousError).
	ErrAmbiguous = errors.New("ambiguous checkpoint id")
	// ErrBadManifest: a manifest is malformed or unsafe and was refused (see *ManifestError).
	ErrBadManifest = manifest.ErrBadManifest
	// ErrCorrupt: a stored file does not match its name or format (see *CorruptError).
	ErrCorrupt = objects.ErrCorrupt
	// ErrNotForward: Replay was asked for a checkpoint that is not after the current position.
	ErrNotForward = errors.New("not a forward move")
	// ErrNotRecorded: the operation completed and is durable, but Recorder.Record failed.
	ErrNotRecorded = errors.New("done but not recorded on the chain")
	// ErrRecovery: an interrupted rewind or replay could not be finished (see *RecoveryError).
	ErrRecovery = errors.New("interrupted restore could not be recovered")
	// ErrNameNotHeld: a checkpoint holds names this system cannot hold (Windows: reserved device
	// names, names ending in a dot or a space, forbidden characters, names that differ only by
	// case in one folder); the restore was refused before it changed anything (see names.go).
	ErrNameNotHeld = errors.New("names this system cannot hold")
	// ErrUnsafePath: the live workspace has a symlink or non-directory where a restore must pass
	// through a directory, or a path outside the workspace; nothing was written through it.
	ErrUnsafePath = restore.ErrUnsafePath
)

// AmbiguousError lists the checkpoints an id prefix could mean. It matches ErrAmbiguous.
type AmbiguousError struct {
	Prefix     string
	Candidates []string // full ids, sorted
}

// Error names the prefix and every candidate.
func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("checkpoint id %q is ambiguous: it could be %s; give more characters", e.Prefix, strings.Join(e.Candidates, ", "))
}

// Is makes an AmbiguousError match ErrAmbiguous.
func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// CorruptError names a stored file that failed its integrity check. It matches ErrCorrupt.
type CorruptError = objects.CorruptError

// RecoveryError says which interrupted operation could not be recovered, why, and where the
// pre-rewind state is kept. It matches ErrRecovery and wraps the cause.
type RecoveryError struct {
	Journal Journal
	Err     error
}

// Error names the operation, the cause and the safety checkpoint.
func (e *RecoveryError) Error() string {
	return fmt.Sprintf("an interrupted %s to %s could not be finished: %v; the state before it is checkpoint %s; fix the cause and run any agent-rewind command again to retry (the journal is kept)",
		e.Journal.Op, e.Journal.To, e.Err, e.Journal.Safety)
}

// Unwrap returns the cause.
func (e *RecoveryError) Unwrap() error { return e.Err }

// Is makes a RecoveryError match ErrRecovery.
func (e *RecoveryError) Is(target error) bool { return target == ErrRecovery }
