package barrier

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// writeTemp writes data to a new temporary file in dir and fsyncs it. The caller renames or
// links it into place and removes it on failure.
func writeTemp(dir string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(name)
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(name)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// replaceFile makes name hold exactly data, durably: temp file, fsync, rename, fsync the
// directory. After a crash name holds either its old content or all of data.
func replaceFile(name string, data []byte) error {
	dir := filepath.Dir(name)
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// createExclusive creates name holding exactly data, durably, only if name does not exist yet:
// it reports false when another writer got there first. The content is complete before the name
// appears (temp file, fsync, link(2), fsync the directory), so a reader never sees it partial;
// link fails with EEXIST atomically, which makes it the arbiter between racing processes.
func createExclusive(name string, data []byte) (created bool, err error) {
	dir := filepath.Dir(name)
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp) // the link, if made, keeps the data
	if err := os.Link(tmp, name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, syncDir(dir)
}

// removeDurable removes name and fsyncs its directory.
func removeDurable(name string) error {
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(filepath.Dir(name))
}

// mkdirDurable creates dir (and missing parents) and fsyncs each parent whose entries changed,
// so that a created directory survives a crash together with what is written into it.
func mkdirDurable(dir string) error {
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: errors.New("exists and is not a directory")}
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirDurable(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) { // created concurrently by another guard
			return nil
		}
		return err
	}
	return syncDir(parent)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
