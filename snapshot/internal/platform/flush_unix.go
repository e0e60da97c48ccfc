//go:build linux || darwin

package platform

import "os"

// FlushedByWriter is false on Unix: fsync(2) flushes a file through any descriptor, so a
// writer may close its file and have it flushed later, with others, by name (OpenToFlush).
const FlushedByWriter = false

// OpenToFlush opens the file or directory name so that Sync flushes it: any descriptor will do.
// It never returns a nil file without an error.
func OpenToFlush(name string) (*os.File, error) {
	return os.Open(name)
}
