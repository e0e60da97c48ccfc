package gateway

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agent-rewind/rewind/internal/regular"
)

// writeFileDurable replaces name with data so that after a crash name holds either its old
// content or all of data: a temporary file in the same directory, written, fsynced, closed,
// renamed over name, and the directory fsynced.
func writeFileDurable(name string, data []byte) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(name)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// lockFile takes an exclusive flock(2) on path, waiting for another holder; closing the
// returned file releases it, and so does the holder's exit, however it exits.
func lockFile(path string) (*os.File, error) {
	f, err := regular.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
