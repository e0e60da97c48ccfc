package platform

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStatIdentity: a file's Stat is the same by path, by open handle and through its folder;
// two files differ in identity, a hard link or a rename keeps it; a write changes size and
// mtime, a mode change the change time and not the mtime.
func TestStatIdentity(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sa, err := Lstat(a)
	if err != nil {
		t.Fatal(err)
	}
	if sa.Mode&syscall.S_IFMT != syscall.S_IFREG || sa.Size != 5 || sa.Mtime == 0 || sa.Ctime == 0 {
		t.Fatalf("Lstat(a) = %+v, want a regular file of 5 bytes with its times", sa)
	}
	f, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	fa, err := Fstat(f)
	f.Close()
	if err != nil || fa != sa {
		t.Fatalf("Fstat(a) = %+v, %v; Lstat(a) = %+v", fa, err, sa)
	}
	fd, _, err := OpenDir(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	at, err := LstatAt(fd, dir, "a")
	CloseDir(fd)
	if err != nil || at != sa {
		t.Fatalf("LstatAt(a) = %+v, %v; Lstat(a) = %+v", at, err, sa)
	}
	sb, err := Lstat(b)
	if err != nil || sb.Ino == sa.Ino {
		t.Fatalf("Lstat(b) = %+v, %v: the same identity as a's %+v", sb, err, sa)
	}

	link := filepath.Join(dir, "link")
	if err := os.Link(a, link); err != nil {
		t.Fatal(err)
	}
	if sl, err := Lstat(link); err != nil || sl.Ino != sa.Ino {
		t.Fatalf("Lstat(hard link of a) = %+v, %v; a is %+v", sl, err, sa)
	}
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(b, moved); err != nil {
		t.Fatal(err)
	}
	if sm, err := Lstat(moved); err != nil || sm.Ino != sb.Ino {
		t.Fatalf("Lstat(b renamed) = %+v, %v; b was %+v", sm, err, sb)
	}

	time.Sleep(20 * time.Millisecond) // past the file system's clock tick
	if err := os.WriteFile(moved, []byte("hello, world"), 0o644); err != nil {
		t.Fatal(err)
	}
	sw, err := Lstat(moved)
	if err != nil || sw.Size != 12 || sw.Mtime == sb.Mtime || sw.Ino != sb.Ino {
		t.Fatalf("after a write: %+v, %v; before: %+v", sw, err, sb)
	}
	time.Sleep(20 * time.Millisecond)
	if err := os.Chmod(moved, 0o444); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(moved, 0o644) // Windows removes no read-only file
	sc, err := Lstat(moved)
	if err != nil || sc.Ctime == sw.Ctime || sc.Mtime != sw.Mtime || sc.Mode&0o222 != 0 {
		t.Fatalf("after a chmod to 0444: %+v, %v; before: %+v", sc, err, sw)
	}
}

// TestLstatFolder: a folder is one, and its entries list through OpenDir; a file is no folder.
func TestLstatFolder(t *testing.T) {
	dir := t.TempDir()
	st, err := Lstat(dir)
	if err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		t.Fatalf("Lstat(folder) = %+v, %v", st, err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if fd, _, err := OpenDir(file, ""); err == nil {
		CloseDir(fd)
		t.Fatal("OpenDir(a file) listed it")
	}
	if _, err := Lstat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Lstat(missing) = %v, want not exist", err)
	}
}

// TestTryLock: a held lock is ErrBusy to another taker, in this process as in another, and
// free once released.
func TestTryLock(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	unlock, err := Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := TryLock(name); !errors.Is(err, ErrBusy) {
		if u != nil {
			u()
		}
		t.Fatalf("TryLock of a held lock = %v, want ErrBusy", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	u, err := TryLock(name)
	if err != nil {
		t.Fatalf("TryLock of a released lock: %v", err)
	}
	u()
}

// BenchmarkLstatAt is the walk's stat of one entry, against os.Lstat of the same path, the
// stdlib's (on Windows it reads the attributes without opening the file, and has no file ID
// or change time: the price of those is the ratio).
func BenchmarkLstatAt(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		b.Fatal(err)
	}
	fd, _, err := OpenDir(dir, "")
	if err != nil {
		b.Fatal(err)
	}
	defer CloseDir(fd)
	b.Run("platform", func(b *testing.B) {
		for b.Loop() {
			if _, err := LstatAt(fd, dir, "f"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.Lstat(filepath.Join(dir, "f")); err != nil {
				b.Fatal(err)
			}
		}
	})
}
