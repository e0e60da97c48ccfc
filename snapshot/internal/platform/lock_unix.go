//go:build linux || darwin

package platform

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/agent-rewind/rewind/internal/lockfile"
)

// Lock takes an exclusive flock(2) on name, waiting for any other holder. The kernel drops
// the lock when the holder exits, however it exits, so a killed process never leaves it held.
// flock locks belong to an open file description: a second open of the same file in the same
// process conflicts like another process would (see snapshot.Options.Lock).
func Lock(name string) (unlock func() error, err error) {
	f, err := lockfile.Open(name, syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}

// ErrBusy is TryLock's answer when another holds the lock.
var ErrBusy = errors.New("held by another process")

// TryLock is Lock without the wait: ErrBusy when another descriptor holds the lock.
func TryLock(name string) (unlock func() error, err error) {
	f, err := lockfile.Open(name, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("%s: %w", name, ErrBusy)
	}
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}
