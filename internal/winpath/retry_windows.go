package winpath

import (
	"errors"
	"syscall"
	"time"
)

// Windows refuses to open, replace or remove a file while another process holds it in a way
// that does not share that (ERROR_SHARING_VIOLATION), and refuses to replace a file that is
// open at all (ERROR_ACCESS_DENIED) unless the rename has POSIX semantics. The readers of
// state files hold them for microseconds, so a refused call is tried again for about half a
// second before its error is returned.
const (
	errorAccessDenied     = syscall.Errno(5)
	errorSharingViolation = syscall.Errno(32)
)

// Retry runs call until it succeeds, fails with an error that is not one of those two, or has
// been refused for about half a second (1 + 2 + ... + 256 ms of waits).
func Retry(call func() error) error {
	err := call()
	for wait := time.Millisecond; err != nil && held(err) && wait <= 256*time.Millisecond; wait *= 2 {
		time.Sleep(wait)
		err = call()
	}
	return err
}

func held(err error) bool {
	return errors.Is(err, errorSharingViolation) || errors.Is(err, errorAccessDenied)
}
