package agentws

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// openAppend opens name for reading and appending, creating it (and making its name durable)
// on first use.
func openAppend(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return os.OpenFile(name, os.O_RDWR|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, err
	}
	if err := syncDir(filepath.Dir(name)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeFileDurable writes data to name through a temporary file in the same directory: write,
// fsync, close, rename, fsync the directory. name then holds all of data or its old content.
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
