package platform

import (
	"errors"
	"syscall"
)

// IsNotEmpty reports whether err is the failure to remove a folder that still has entries.
func IsNotEmpty(err error) bool { return errors.Is(err, syscall.ERROR_DIR_NOT_EMPTY) }
