package platform

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/agent-rewind/rewind/internal/lockfile"
)

// Lock takes an exclusive LockFileEx lock on name, waiting for any other holder. Windows drops
// the lock when the handle closes, however the holder exits, so a killed process never leaves
// it held; a second open of the same file in the same process conflicts like another process
// would, as flock does on Unix (package lockfile).
func Lock(name string) (unlock func() error, err error) {
	f, err := lockfile.Open(name, lockfile.Exclusive)
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}

// ErrBusy is TryLock's answer when another holds the lock.
var ErrBusy = errors.New("held by another process")

// TryLock is Lock without the wait: ErrBusy when another handle holds the lock.
func TryLock(name string) (unlock func() error, err error) {
	f, err := lockfile.Open(name, lockfile.Exclusive|lockfile.NonBlocking)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("%s: %w", name, ErrBusy)
	}
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}
