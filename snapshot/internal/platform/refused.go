package platform

import (
	"errors"
	"syscall"
)

// IsSymlinkRefused reports whether err is a no-follow open's refusal of a symlink in the
// name's place (ELOOP; on Windows, of any reparse point).
func IsSymlinkRefused(err error) bool { return errors.Is(err, syscall.ELOOP) }
