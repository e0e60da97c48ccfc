package unixsock

import (
	"errors"
	"syscall"
)

// wsaEConnRefused is WSAECONNREFUSED: Windows' own number, not syscall.ECONNREFUSED (which Go
// invents for Windows and no call returns).
const wsaEConnRefused = syscall.Errno(10061)

// refused reports whether a connect failed because nothing listens on the socket file.
func refused(err error) bool { return errors.Is(err, wsaEConnRefused) }
