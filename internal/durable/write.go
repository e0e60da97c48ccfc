package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile makes name hold exactly data with permissions perm, durably: a temporary file in the
// same directory, written, fsynced, closed, renamed over name, and the directory fsynced.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	return replace(name, data, perm, true)
}

// WriteFileUnsynced replaces name with data atomically but without the fsyncs: after a crash name
// may hold its old content, the new, or nothing. Only for caches that are rebuilt when lost.
func WriteFileUnsynced(name string, data []byte, perm fs.FileMode) error {
	return replace(name, data, perm, false)
}

// WriteFileUnsyncedIn is WriteFileUnsynced with the temporary file in dir (on name's file
// system), as StageIn: for a writer whose durability comes from elsewhere (a log synced first),
// and which cleans dir of what an interrupted write leaves.
func WriteFileUnsyncedIn(dir, name string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTempIn(dir, name, data, perm, false)
	if err != nil {
		return err
	}
	if err := rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func replace(name string, data []byte, perm fs.FileMode, sync bool) error {
	tmp, err := writeTemp(name, data, perm, sync)
	if err != nil {
		return err
	}
	if err := rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	if !sync {
		return nil
	}
	return SyncDir(filepath.Dir(name))
}

// Staged is a file written beside its name and flushed, not yet in place: Stage lets the flush
// of a file overlap other work (another file's flush) when the name must appear only after it.
type Staged struct{ tmp, name string }

// Stage writes data to a temporary file beside name with permissions perm and fsyncs it. Commit
// then renames it over name and fsyncs the directory, as WriteFile does; Abort removes it.
func Stage(name string, data []byte, perm fs.FileMode) (*Staged, error) {
	return StageIn(filepath.Dir(name), name, data, perm)
}

// StageIn is Stage with the temporary file in the folder dir, which must be on name's file
// system: a writer that cleans what its interrupted writes left from one folder stages there,
// instead of leaving temporary files among name's siblings for someone to list.
func StageIn(dir, name string, data []byte, perm fs.FileMode) (*Staged, error) {
	tmp, err := writeTempIn(dir, name, data, perm, true)
	if err != nil {
		return nil, err
	}
	return &Staged{tmp: tmp, name: name}, nil
}

// Commit puts the staged file in place, durably.
func (s *Staged) Commit() error {
	if err := rename(s.tmp, s.name); err != nil {
		os.Remove(s.tmp)
		return err
	}
	return SyncDir(filepath.Dir(s.name))
}

// Abort removes the staged file; name is left as it was.
func (s *Staged) Abort() { os.Remove(s.tmp) }

// CreateExclusive creates name holding exactly data, durably, only if name does not exist yet:
// it reports false when another writer got there first. The content is complete before the name
// appears (temporary file, fsync, link(2), fsync the directory), so a reader never sees it
// partial; link fails with EEXIST atomically, which makes it the arbiter between racing
// processes.
func CreateExclusive(name string, data []byte, perm fs.FileMode) (created bool, err error) {
	tmp, err := writeTemp(name, data, perm, true)
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
	return true, SyncDir(filepath.Dir(name))
}

// writeTemp writes data to a new temporary file beside name, with permissions perm, fsynced when
// sync is set, and returns its path. The caller renames or links it into place.
func writeTemp(name string, data []byte, perm fs.FileMode, sync bool) (string, error) {
	return writeTempIn(filepath.Dir(name), name, data, perm, sync)
}

// writeTempIn is writeTemp with the temporary file in dir.
func writeTempIn(dir, name string, data []byte, perm fs.FileMode, sync bool) (string, error) {
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(name)+"-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(tmp)
		return "", err
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}
