package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agent-rewind/rewind/internal/regular"
)

// Remove removes name, if it exists, and fsyncs its directory, so that the removal survives a
// crash. A name already gone is not an error: the caller wanted it absent, and it is.
func Remove(name string) error {
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return SyncDir(filepath.Dir(name))
}

// Rename puts oldpath at newpath, replacing what was there, and fsyncs newpath's directory, so
// that the move survives a crash. On Windows the move is written through (MoveFileEx), and a
// file still open through package regular (which shares deletion) can be moved.
func Rename(oldpath, newpath string) error {
	if err := rename(oldpath, newpath); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(newpath))
}

// RenameDirUnsynced is Rename without the fsync of newpath's directory, for a caller that
// renames many names into a few directories and then syncs each once (SyncDir, or fsyncs of
// its own batched together): the move is not durable until then. On Windows, where there is no
// directory to sync, the move itself is written through, as Rename's is.
func RenameDirUnsynced(oldpath, newpath string) error { return rename(oldpath, newpath) }

// MkdirAll creates dir and any missing parents with permissions perm, fsyncing the parent of
// each directory it creates, so that a new directory survives a crash together with what is
// written into it. A directory created concurrently by another process is not an error.
func MkdirAll(dir string, perm fs.FileMode) error {
	dir = filepath.Clean(dir)
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := MkdirAll(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	return SyncDir(parent)
}

// OpenAppend opens name for reading and appending, creating it (mode 0600) on first use and then
// syncing its directory, so that the new name is durable before anything is appended. An
// existing name must be a regular file (see package regular).
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
