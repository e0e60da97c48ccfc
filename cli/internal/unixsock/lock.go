package unixsock

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/internal/lockfile"
)

// ErrHeld is returned by Lock when another process holds the lock: its server runs.
var ErrHeld = errors.New("the lock is held by another process")

// Lock takes the exclusive lock on the file name, created if missing, without waiting, and
// returns the open file, which holds the lock until it is closed or the process ends.
func Lock(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockfile.Lock(f, lockfile.Exclusive|lockfile.NonBlocking); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrHeld
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f, nil
}
