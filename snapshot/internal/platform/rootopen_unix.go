//go:build linux || darwin

package platform

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// OpenInRoot opens name in root for reading without following a final symlink (a symlink
// there fails, and IsSymlinkRefused says so) and without blocking on a FIFO put there since a
// stat (O_NONBLOCK): a caller that wants a regular file checks its Stat before reading.
func OpenInRoot(root *os.Root, name string) (*os.File, error) {
	return root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// OpenDirInRoot opens the directory name in root for reading; anything else there, a
// symlink to a directory included, fails.
func OpenDirInRoot(root *os.Root, name string) (*os.File, error) {
	return root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
}

// CreateInRoot creates name in root for writing, with mode perm; it fails when anything is
// already there, a symlink included (never followed).
func CreateInRoot(root *os.Root, name string, perm fs.FileMode) (*os.File, error) {
	return root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
}

// IsSymlinkRefused reports whether err is OpenInRoot's failure on a symlink (ELOOP).
func IsSymlinkRefused(err error) bool { return errors.Is(err, syscall.ELOOP) }
