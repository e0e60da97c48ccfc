package hookserver

import (
	"errors"
	"syscall"
)

// Errors of a pipe whose other end closed (winerror.h).
const (
	errorBrokenPipe = syscall.Errno(109)
	errorNoData     = syscall.Errno(232) // a write to a pipe being closed
)

// closedUnread reports whether a write or read failed because the server closed the
// connection without reading all that was sent.
func closedUnread(err error) bool {
	return errors.Is(err, errorBrokenPipe) || errors.Is(err, errorNoData)
}
