package durable

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/internal/winpath"
)

// A state file that a reader holds open (regular.Open, as every reader of state files does) is
// still replaced durably, and the reader keeps reading what it opened. On Windows this needs the
// reader's handle to share deletion and the rename to replace an open file.
func TestWriteFileOverAnOpenReader(t *testing.T) {
	if winpath.UnderWine() {
		t.Skip("Wine 8 cannot replace an open file: it has no rename with POSIX semantics, which Windows 10 and later use here")
	}
	name := filepath.Join(t.TempDir(), "position")
	if err := WriteFile(name, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := regular.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteFile(name, []byte("new\n"), 0o600); err != nil {
		t.Fatalf("replacing a file a reader holds open: %v", err)
	}
	b := make([]byte, 16)
	n, _ := r.Read(b)
	if string(b[:n]) != "old\n" {
		t.Fatalf("the reader read %q, want what it opened", b[:n])
	}
	if got, err := os.ReadFile(name); err != nil || string(got) != "new\n" {
		t.Fatalf("after the replace: %q %v", got, err)
	}
}

// A file its writer still holds open (through regular, as a note kept locked while it is named)
// is moved to its name; on Windows that needs the writer's handle to share deletion.
func TestRenameAFileHeldOpen(t *testing.T) {
	dir := t.TempDir()
	tmp, name := filepath.Join(dir, ".tmp-note"), filepath.Join(dir, "note")
	f, err := regular.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("note\n")); err != nil {
		t.Fatal(err)
	}
	if err := Rename(tmp, name); err != nil {
		t.Fatalf("renaming a file held open: %v", err)
	}
	if got, err := os.ReadFile(name); err != nil || string(got) != "note\n" {
		t.Fatalf("after the rename: %q %v", got, err)
	}
	if _, err := os.Lstat(tmp); !os.IsNotExist(err) {
		t.Fatalf("the old name is still there: %v", err)
	}
}
