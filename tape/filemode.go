package tape

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// fileMode is the mode of a tape's database and its companion files (-wal, -shm, -journal):
// the owner alone reads them. The records are sealed, but their sizes, times and order are not,
// and nothing but the owner's processes has any use for them.
const fileMode fs.FileMode = 0o600

// companions are the files SQLite keeps beside a database.
var companions = []string{"-wal", "-shm", "-journal"}

// privateFiles prepares the database at path so that SQLite never creates a file of it wider
// than fileMode: the database and its shared-memory index (which the driver creates 0666 less
// the umask, whatever the database's mode) are created here with fileMode when missing, and any
// of the four files an older version left wider is narrowed. The write-ahead log and the
// rollback journal, which SQLite creates and deletes as it goes, take the database's mode
// through the modeof URI parameter (databaseURI).
func privateFiles(path string) error {
	for _, p := range []string{path, path + "-shm"} {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL|noFollow, fileMode)
		if err == nil {
			err = f.Close()
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s with mode %v: %w", p, fileMode, err)
		}
	}
	return narrowFiles(path)
}

// narrowFiles sets fileMode on the database at path and on those of its companions that exist
// with a wider mode. It changes the mode by name and opens nothing, so it cannot disturb a
// lock another connection of this process holds on one of them.
func narrowFiles(path string) error {
	for _, suffix := range append([]string{""}, companions...) {
		p := path + suffix
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file (%v): move it away", p, fi.Mode().Type())
		}
		if fi.Mode().Perm()&^fileMode != 0 {
			if err := os.Chmod(p, fileMode); err != nil {
				return fmt.Errorf("narrow %s to mode %v: %w", p, fileMode, err)
			}
		}
	}
	return nil
}

// databaseURI is the SQLite URI of the database at path with modeof set to the database
// itself, so that SQLite creates its -wal and -journal with the database's mode. Characters
// that mean something in a URI are escaped.
func databaseURI(path string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	escQuery := strings.NewReplacer("%", "%25", "#", "%23", "&", "%26", "=", "%3d", "+", "%2b")
	return "file:" + esc.Replace(path) + "?modeof=" + escQuery.Replace(path)
}
