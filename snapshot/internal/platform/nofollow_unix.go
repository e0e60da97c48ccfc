//go:build linux || darwin

package platform

import (
	"os"
	"syscall"
)

// OpenNoFollow opens the file name for reading, refusing a symbolic link in its place
// (O_NOFOLLOW): what a workspace path names is read only if it is the file itself, never what a
// link swapped in points to.
func OpenNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
