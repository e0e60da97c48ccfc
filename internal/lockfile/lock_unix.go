//go:build unix

package lockfile

import (
	"errors"
	"os"
	"syscall"
)

// What Lock and Open take: flock's own values, so callers on Unix may pass syscall.LOCK_*.
const (
	Shared      = syscall.LOCK_SH
	Exclusive   = syscall.LOCK_EX
	Unlock      = syscall.LOCK_UN
	NonBlocking = syscall.LOCK_NB
)

// Lock applies how (Exclusive, Shared or Unlock, with NonBlocking not to wait) to f, retrying
// when a signal interrupts the wait. A lock held elsewhere under NonBlocking is
// syscall.EWOULDBLOCK.
func Lock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
