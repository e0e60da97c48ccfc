package platform

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestHeldOpen: a file this process holds open without sharing anything, as an editor or a
// dev server may, can be neither removed nor renamed over; after the retries the error is
// ErrHeldOpen and names the file. Once closed, both work.
func TestHeldOpen(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "held.txt")
	if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := syscall.UTF16PtrFromString(name)
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ, 0, nil, syscall.OPEN_EXISTING, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			syscall.CloseHandle(h)
		}
	}()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	err = RemoveInRoot(root, "held.txt")
	if err == nil {
		t.Skip("this Windows (Wine?) removed a file held open without FILE_SHARE_DELETE: it does not enforce sharing modes")
	}
	if !errors.Is(err, ErrHeldOpen) {
		t.Fatalf("RemoveInRoot of a held file: %v, want ErrHeldOpen", err)
	}
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != "held.txt" {
		t.Errorf("RemoveInRoot's error does not name the file: %v", err)
	}
	t.Log(err)
	if err := RenameInRoot(root, "new.txt", "held.txt"); !errors.Is(err, ErrHeldOpen) {
		t.Errorf("RenameInRoot over a held file: %v, want ErrHeldOpen", err)
	}
	syscall.CloseHandle(h)
	closed = true
	if err := RenameInRoot(root, "new.txt", "held.txt"); err != nil {
		t.Errorf("RenameInRoot once closed: %v", err)
	}
	if err := RemoveInRoot(root, "held.txt"); err != nil {
		t.Errorf("RemoveInRoot once closed: %v", err)
	}
}
