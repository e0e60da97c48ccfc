package platform

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestRenameThroughOpensWriteThrough: the handle a rename in a root goes through is opened
// with FILE_WRITE_THROUGH (FileModeInformation says so), which is what makes the rename durable
// when it returns; os.Root's own Rename opens without it.
func TestRenameThroughOpensWriteThrough(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	h, err := openForRename(syscall.Handle(d.Fd()), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.CloseHandle(h)
	const fileModeInformation = 16
	var iosb [2]uintptr
	var mode uint32
	r, _, _ := procNtQueryInformationFile.Call(uintptr(h), uintptr(unsafe.Pointer(&iosb)), uintptr(unsafe.Pointer(&mode)), unsafe.Sizeof(mode), fileModeInformation)
	if r != 0 {
		t.Fatalf("NtQueryInformationFile(FileModeInformation): NTSTATUS %#x", r)
	}
	if mode&fileWriteThrough == 0 {
		t.Errorf("the rename's handle has mode %#x, without FILE_WRITE_THROUGH (%#x)", mode, fileWriteThrough)
	}
}

// TestRenameInRoot: a rename in a root replaces its target, in the root's top folder, between
// subfolders, and in a folder deep enough that its full path is over 260 characters; a name
// missing is fs.ErrNotExist and names both paths.
func TestRenameInRoot(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(strings.Repeat("d", 100), strings.Repeat("e", 100), strings.Repeat("f", 100))
	for _, sub := range []string{"sub", "other", deep} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, c := range []struct{ old, new string }{
		{"tmp", "file"},
		{"sub/tmp", "sub/file"},
		{"sub/tmp", "other/file"},
		{filepath.Join(deep, "tmp"), filepath.Join(deep, "file")},
	} {
		if err := root.WriteFile(c.old, []byte("new "+c.old), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := root.WriteFile(c.new, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := RenameInRoot(root, c.old, c.new); err != nil {
			t.Fatalf("RenameInRoot(%s, %s): %v", c.old, c.new, err)
		}
		got, err := root.ReadFile(c.new)
		if err != nil || string(got) != "new "+c.old {
			t.Errorf("after RenameInRoot(%s, %s), %s holds %q, %v", c.old, c.new, c.new, got, err)
		}
		if _, err := root.Lstat(c.old); !os.IsNotExist(err) {
			t.Errorf("after RenameInRoot(%s, %s), %s: %v, want it gone", c.old, c.new, c.old, err)
		}
	}
	err = RenameInRoot(root, "missing", "file")
	if !os.IsNotExist(err) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("RenameInRoot of a missing name: %v, want not exist naming it", err)
	}
}
