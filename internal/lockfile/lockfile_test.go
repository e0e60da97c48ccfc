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
	f, err := Open(name, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	// A second open file description conflicts like another process.
	if _, err := Open(name, Exclusive|NonBlocking); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("second lock while held: %v, want EWOULDBLOCK", err)
	}
	f.Close()
	g, err := Open(name, Exclusive|NonBlocking)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	g.Close()
}

func TestOpenNamesAMissingDirectory(t *testing.T) {
	name := filepath.Join(t.TempDir(), "missing", "lock")
	if _, err := Open(name, Exclusive); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock in a missing directory: %v, want ErrNotExist", err)
	}
}

// Shared locks coexist and keep out an exclusive one; Unlock releases; a shared lock converts
// to an exclusive one once the other holder is gone: flock's behaviour, on every system.
func TestSharedUnlockAndConversion(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	a, err := Open(name, Shared)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(name, Shared|NonBlocking)
	if err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	defer b.Close()
	if _, err := Open(name, Exclusive|NonBlocking); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("exclusive while shared is held: %v, want EWOULDBLOCK", err)
	}
	if err := Lock(a, Exclusive|NonBlocking); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("converting while another holds shared: %v, want EWOULDBLOCK", err)
	}
	if err := Lock(b, Unlock); err != nil {
		t.Fatal(err)
	}
	if err := Lock(a, Exclusive|NonBlocking); err != nil {
		t.Fatalf("converting to exclusive once alone: %v", err)
	}
	if err := Lock(b, Shared|NonBlocking); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("shared while exclusive is held: %v, want EWOULDBLOCK", err)
	}
}
