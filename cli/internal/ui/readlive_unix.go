//go:build unix

package ui

import (
	"os"
	"syscall"
)

// readLiveFlags open a live file the page shows for reading: not through a symlink swapped in
// since its lstat, and without blocking on a FIFO swapped in.
const readLiveFlags = os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
