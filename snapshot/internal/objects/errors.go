package objects

import (
	"errors"
	"fmt"
)

// ErrCorrupt: a stored file does not match its name or format (see *CorruptError). The
// snapshot package exports it as snapshot.ErrCorrupt.
var ErrCorrupt = errors.New("snapshot store is corrupt")

// CorruptError names a stored file that failed its integrity check. It matches ErrCorrupt.
type CorruptError struct {
	Path   string // the file under the state directory
	Reason string
}

// Error names the file and what is wrong with it.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("corrupt snapshot store: %s: %s (the file was changed or damaged outside agent-rewind; restore the state directory from a backup, or rewind to another checkpoint)", e.Path, e.Reason)
}

// Is makes a CorruptError match ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
