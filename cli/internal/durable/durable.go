package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/internal/regular"
)

// WriteFile writes data to name through a temporary file in the same directory: write, fsync,
// close, rename, fsync the directory. After a crash name holds all of data or its old content.
func WriteFile(name string, data []byte) error {
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
	return SyncDir(dir)
}

// OpenAppend opens name for reading and appending, creating it on first use and then syncing
// its directory, so that the new name is durable before anything is appended.
func OpenAppend(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return regular.OpenFile(name, os.O_RDWR|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, err
	}
	if err := SyncDir(filepath.Dir(name)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// SyncDir fsyncs a directory, making the names created, renamed or removed in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
