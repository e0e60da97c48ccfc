//go:build unix

package lockfile

import (
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpenRefusesAFIFO(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skip(err)
	}
	if _, err := Open(name, Exclusive); err == nil {
		t.Fatal("a FIFO in place of the lock file was locked")
	}
}
