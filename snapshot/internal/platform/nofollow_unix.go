//go:build linux || darwin

package platform

import (
	"io/fs"
	"os"
	"syscall"
)

// OpenNoFollow opens the file name for reading, refusing a symbolic link in its place
// (O_NOFOLLOW, failing with ELOOP): what a workspace path names is read only if it is the file
// itself, never what a link swapped in points to. It does not block on a FIFO put there since
// a stat (O_NONBLOCK): a caller that wants a regular file checks its Stat before reading.
func OpenNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// OpenAppend opens the file name for appending, creating it with mode perm when missing and
// refusing a symbolic link in its place (ELOOP).
func OpenAppend(name string, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, perm)
}

// noBlock keeps an open from blocking on a FIFO.
const noBlock = syscall.O_NONBLOCK
