//go:build !linux

package commitlog

import (
	"errors"
	"os"
)

// BootID is not known here: a store on this system writes each file durably, without the log.
func BootID() (string, error) { return "", errors.ErrUnsupported }

func datasync(f *os.File) error { return f.Sync() }
