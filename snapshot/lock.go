package snapshot

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/agent-rewind/rewind/internal/lockfile"
)

// flockFile takes an exclusive flock(2) on name, waiting for any other holder. The kernel drops
// the lock when the holder exits, however it exits, so a killed process never leaves it held.
// flock locks belong to an open file description: a second open of the same file in the same
// process conflicts like another process would (see Options.Lock).
func flockFile(name string) (unlock func() error, err error) {
	f, err := lockfile.Open(name, syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}

// errBusy is tryFlockFile's answer when another holds the lock.
var errBusy = errors.New("held by another process")

// tryFlockFile is flockFile without the wait: errBusy when another descriptor holds the lock.
func tryFlockFile(name string) (unlock func() error, err error) {
	f, err := lockfile.Open(name, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("%s: %w", name, errBusy)
	}
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}
