package regular

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On Windows: a directory and a symlink in place of a state file are refused with what they
// are; a person's input follows a symlink to a regular file; a new file is created regular.
func TestWindowsKinds(t *testing.T) {
	dir := t.TempDir()
	regularFile := filepath.Join(dir, "regular")
	if err := os.WriteFile(regularFile, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(regularFile); err != nil || string(b) != "hello\n" {
		t.Fatalf("ReadFile(regular) = %q, %v", b, err)
	}
	for _, read := range []func(string) ([]byte, error){ReadFile, ReadInput} {
		if _, err := read(sub); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a directory") {
			t.Fatalf("a directory: %v", err)
		}
		if _, err := read(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("missing: %v", err)
		}
	}
	created := filepath.Join(dir, "created")
	f, err := OpenFile(created, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("line\n")
	f.Close()
	if b, err := ReadFile(created); err != nil || string(b) != "line\n" {
		t.Fatalf("created: %q %v", b, err)
	}

	link := filepath.Join(dir, "symlink")
	if err := os.Symlink(regularFile, link); err != nil {
		t.Skipf("no symlinks here (Windows needs Developer Mode or a privilege for them): %v", err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Skipf("the symlink was made but reads back as %v, %v (Wine 8 keeps no Windows symlinks)", fi, err)
	}
	if _, err := ReadFile(link); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("ReadFile(symlink) = %v, want it refused as a symlink", err)
	}
	if _, err := OpenFile(link, os.O_WRONLY|os.O_TRUNC, 0); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("OpenFile(symlink, O_TRUNC) = %v, want it refused", err)
	}
	if b, err := ReadInput(link); err != nil || string(b) != "hello\n" {
		t.Fatalf("ReadInput(symlink) = %q, %v", b, err)
	}
	if b, _ := os.ReadFile(regularFile); string(b) != "hello\n" {
		t.Fatalf("the symlink's target changed: %q", b)
	}
}
