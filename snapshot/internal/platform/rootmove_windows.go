package platform

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// ErrHeldOpen is a rename or remove that Windows refused because another process holds the file
// open without sharing its deletion (an editor, a dev server, an antivirus scanning it).
var ErrHeldOpen = errors.New("held open by another process, which Windows does not let a rewind replace or delete: close the program holding it (an editor, a dev server, an antivirus) and try again")

// RenameInRoot renames old over new in root, written through (renameThrough: there is no
// folder to fsync after it on Windows), with POSIX semantics where the file system has them,
// which replace a file that others hold open sharing its deletion. A refusal because the file
// is held (ERROR_SHARING_VIOLATION, ERROR_ACCESS_DENIED) is tried again for about half a
// second (winpath.Retry), then is ErrHeldOpen.
func RenameInRoot(root *os.Root, old, new string) error {
	return held(winpath.Retry(func() error { return renameThrough(root, old, new) }))
}

// RemoveInRoot removes name in root, never following a reparse point, tried again as
// RenameInRoot is when the file is held.
func RemoveInRoot(root *os.Root, name string) error {
	return held(winpath.Retry(func() error { return root.Remove(name) }))
}

// Windows's refusals for a file another process holds (winerror.h).
const (
	errorAccessDenied     = syscall.Errno(5)
	errorSharingViolation = syscall.Errno(32)
)

// held marks a refusal still there after the retries as ErrHeldOpen. Access denied is also
// what a file one may not change gives, so its message says both.
func held(err error) error {
	switch {
	case errors.Is(err, errorSharingViolation):
		return fmt.Errorf("%w: %w", err, ErrHeldOpen)
	case errors.Is(err, errorAccessDenied):
		return fmt.Errorf("%w (if it is not that the file's permissions forbid it, it is %w)", err, ErrHeldOpen)
	}
	return err
}
