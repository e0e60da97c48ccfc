package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpenExcludesAnotherHolder(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	f, err := Open(name, syscall.LOCK_EX)
	if err != nil {
		t.Fatal(err)
	}
	// A second open file description conflicts like another process.
	if _, err := Open(name, syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("second lock while held: %v, want EWOULDBLOCK", err)
	}
	f.Close()
	g, err := Open(name, syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	g.Close()
}

func TestOpenRefusesAFIFO(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skip(err)
	}
	if _, err := Open(name, syscall.LOCK_EX); err == nil {
		t.Fatal("a FIFO in place of the lock file was locked")
	}
}

func TestOpenNamesAMissingDirectory(t *testing.T) {
	name := filepath.Join(t.TempDir(), "missing", "lock")
	if _, err := Open(name, syscall.LOCK_EX); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock in a missing directory: %v, want ErrNotExist", err)
	}
}
