package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func TestWriteFileReplacesWhole(t *testing.T) {
	for _, write := range []struct {
		name string
		fn   func(string, []byte, os.FileMode) error
	}{{"WriteFile", WriteFile}, {"WriteFileUnsynced", WriteFileUnsynced}} {
		t.Run(write.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "f")
			for _, want := range []string{"first", "second, longer"} {
				if err := write.fn(name, []byte(want), 0o640); err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(name); err != nil || string(b) != want {
					t.Fatalf("read %q, %v; want %q", b, err, want)
				}
			}
			if st, _ := os.Stat(name); st.Mode().Perm() != perm(0o640) {
				t.Fatalf("mode %v, want %v", st.Mode().Perm(), perm(0o640))
			}
			if es, _ := os.ReadDir(dir); len(es) != 1 {
				t.Fatalf("temporary files left behind: %v", es)
			}
			if err := write.fn(filepath.Join(dir, "missing", "f"), nil, 0o600); err == nil {
				t.Fatal("a write into a missing directory succeeded")
			}
		})
	}
}

func TestCreateExclusiveKeepsTheFirst(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "key")
	if created, err := CreateExclusive(name, []byte("first"), 0o600); err != nil || !created {
		t.Fatalf("first create: %v, %v", created, err)
	}
	if created, err := CreateExclusive(name, []byte("second"), 0o600); err != nil || created {
		t.Fatalf("second create: %v, %v; want false, nil", created, err)
	}
	if b, _ := os.ReadFile(name); string(b) != "first" {
		t.Fatalf("content %q, want the first writer's", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("temporary files left behind: %v", es)
	}
}

func TestRemoveIsIdempotent(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	os.WriteFile(name, []byte("x"), 0o600)
	for range 2 {
		if err := Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("still there: %v", err)
	}
}

func TestMkdirAll(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "c")
	for range 2 { // the second call finds it there
		if err := MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != perm(0o700|fs.ModeDir) {
		t.Fatalf("stat %v, %v", st, err)
	}
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o600)
	if err := MkdirAll(filepath.Join(file, "sub"), 0o700); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("under a file: %v, want ENOTDIR", err)
	}
}

func TestOpenAppendCreatesThenAppends(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	for _, line := range []string{"a\n", "b\n"} {
		f, err := OpenAppend(name)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	if b, _ := os.ReadFile(name); string(b) != "a\nb\n" {
		t.Fatalf("log %q", b)
	}
}

// TestStageCommitAbort: a staged file is invisible under its name until Commit, which puts it
// whole in place; Abort leaves the name as it was and no temporary file behind.
func TestStageCommitAbort(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Stage(name, []byte("new"), 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "old" {
		t.Fatalf("staged content visible before Commit: %q", b)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Fatalf("after Commit %q, want new", b)
	}
	if st, _ := os.Stat(name); st.Mode().Perm() != perm(0o640) {
		t.Fatalf("mode %v, want %v", st.Mode().Perm(), perm(0o640))
	}
	s, err = Stage(name, []byte("dropped"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Fatalf("after Abort %q, want new", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("temporary files left behind: %v", es)
	}
	if _, err := Stage(filepath.Join(dir, "missing", "f"), nil, 0o600); err == nil {
		t.Fatal("a stage into a missing directory succeeded")
	}
}

// TestStageIn: the temporary file is in the folder given, never beside the name, and the commit
// puts it in place.
func TestStageIn(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	name := filepath.Join(dir, "f")
	s, err := StageIn(tmp, name, []byte("new"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Fatalf("staged beside the name: %v", es)
	}
	if es, _ := os.ReadDir(tmp); len(es) != 1 || !strings.HasPrefix(es[0].Name(), ".tmp-f-") {
		t.Fatalf("in the staging folder: %v", es)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Fatalf("after Commit %q", b)
	}
	if es, _ := os.ReadDir(tmp); len(es) != 0 {
		t.Fatalf("left in the staging folder: %v", es)
	}
}

// perm is the permission bits a file made with mode m shows here: Windows has no POSIX modes,
// only the read-only attribute, which a writable mode leaves clear (os reports 0666, or 0777
// for a folder).
func perm(m fs.FileMode) fs.FileMode {
	if runtime.GOOS != "windows" {
		return m.Perm()
	}
	if m.IsDir() {
		return 0o777
	}
	return 0o666
}
