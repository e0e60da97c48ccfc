// Package lockfile takes whole-file locks on lock files, the one way every module of this
// repository serialises writers across processes: flock(2) on Unix, LockFileEx on Windows.
//
// flock suits a store that agents and their hooks reach from many processes: the kernel drops a
// lock when the descriptor holding it closes, however the holder exits, so a killed process
// never leaves a lock held. A lock belongs to an open file description, so a second open of the
// same file in the same process conflicts like another process would. LockFileEx locks belong
// to a handle and end with it in the same way, so both systems give the same behaviour; a lock
// held elsewhere under NonBlocking is syscall.EWOULDBLOCK on both.
package lockfile

import (
	"fmt"
	"os"

	"github.com/agent-rewind/rewind/internal/regular"
)

// Open opens the lock file name, creating it (mode 0600) if missing, and takes how on it
// (Exclusive or Shared, with NonBlocking not to wait).
// Closing the returned file releases the lock. name must be a regular file (see package
// regular): a FIFO put in its place fails at once instead of hanging every writer.
func Open(name string, how int) (*os.File, error) {
	f, err := regular.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", name, err)
	}
	if err := Lock(f, how); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f, nil
}
