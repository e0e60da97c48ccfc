//go:build linux || darwin

package platform

import (
	"errors"
	"syscall"
)

// IsNotEmpty reports whether err is the failure to remove a directory that still has entries:
// ENOTEMPTY, or EEXIST, which POSIX allows rmdir(2) to return instead.
func IsNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
