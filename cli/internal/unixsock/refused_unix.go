//go:build unix

package unixsock

import (
	"errors"
	"syscall"
)

// refused reports whether a connect failed because nothing listens on the socket file.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
