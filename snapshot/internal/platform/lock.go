package platform

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/agent-rewind/rewind/internal/lockfile"
)

// Lock takes an exclusive lock on name (flock(2); LockFileEx on Windows), waiting for any other
// holder. The system drops the lock when the holder exits, however it exits, so a killed process
// never leaves it held. The lock belongs to an open file: a second open of the same file in the
// same process conflicts like another process would (see snapshot.Options.Lock).
func Lock(name string) (unlock func() error, err error) {
	f, err := lockfile.Open(name, lockfile.Exclusive)
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}

// ErrBusy is TryLock's answer when another holds the lock.
var ErrBusy = errors.New("held by another process")

// TryLock is Lock without the wait: ErrBusy when another open file holds the lock.
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
