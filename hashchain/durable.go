package hashchain

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// writeFileDurable writes data to name through a temporary file in the same directory: write,
// fsync, close, rename, fsync the directory. After a crash name holds the old or the new bytes.
func writeFileDurable(name string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(name)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
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

// syncDir fsyncs a directory, making the names in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// flock takes an exclusive flock(2) on f, waiting for any other holder. The kernel drops it
// when the descriptor closes, however the process ends.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func funlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
