//go:build unix

package tape

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ncruces/go-sqlite3"
)

// withUmask runs the test under umask 022, the usual one, under which a file created 0666
// would be readable by everyone.
func withUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
}

// wantMode fails unless each file exists with mode 0600.
func wantMode(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want -rw-------", filepath.Base(p), fi.Mode().Perm())
		}
	}
}

// TestFileMode: a tape's database and the -wal and -shm files beside it while it is open are
// 0600, and Open narrows the database of an older tape that was left 0644.
func TestFileMode(t *testing.T) {
	withUmask(t)
	dir := t.TempDir()
	tp := openTest(t, dir)
	recordN(t, tp, "e1", 2)
	db := filepath.Join(dir, "acme", DatabaseName)
	wantMode(t, db, db+"-wal", db+"-shm")
	if err := tp.Close(); err != nil {
		t.Fatal(err)
	}

	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	tp = openTest(t, dir)
	recordN(t, tp, "e2", 1)
	wantMode(t, db, db+"-wal", db+"-shm")
}

// TestJournalMode: the rollback journal, which a tape in WAL mode only makes while it converts
// a database, is 0600 too: SQLite gives it the database's mode through the URI Open uses. The
// folder's name holds the characters a URI escapes, which must still name the same files.
func TestJournalMode(t *testing.T) {
	withUmask(t)
	dir := filepath.Join(t.TempDir(), "a?b#c%25d&modeof=x")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, DatabaseName)
	if err := privateFiles(db); err != nil {
		t.Fatal(err)
	}
	conn, err := sqlite3.OpenFlags(databaseURI(db), sqlite3.OPEN_READWRITE|sqlite3.OPEN_CREATE|sqlite3.OPEN_URI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// PERSIST keeps the journal after the commit, so that its mode can be read.
	if err := conn.Exec("PRAGMA journal_mode = PERSIST; CREATE TABLE t (a); INSERT INTO t VALUES (1);"); err != nil {
		t.Fatal(err)
	}
	wantMode(t, db, db+"-journal")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case DatabaseName, DatabaseName + "-journal", DatabaseName + "-shm":
		default:
			t.Errorf("unexpected file %q: the URI named another file", e.Name())
		}
	}
}

// TestOpenRefusesSymlinkedDatabase: a database path that is a symbolic link is refused, not
// followed (SQLite would refuse it too; the mode is never set on the link's target).
func TestOpenRefusesSymlinkedDatabase(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere.db")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "acme"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "acme", DatabaseName)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme", Key: testKey})
	if err == nil {
		t.Fatal("Open followed a symbolic link")
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("the link's target changed mode to %v", fi.Mode().Perm())
	}
}
