package watch

import (
	"os"

	"golang.org/x/sys/unix"
)

// errFile is a file with no name in folder dir, for a watcher's standard error at start (Start):
// nothing of it is left behind, whatever happens to either process. Where the file system has
// no O_TMPFILE, it is a named file removed at once.
func errFile(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), "watcher's stderr"), nil
	}
	f, err := os.CreateTemp(dir, ".start-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
