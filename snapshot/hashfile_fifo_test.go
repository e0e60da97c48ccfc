//go:build unix

// Unix only: Windows has no FIFOs in a folder, so nothing can be swapped in there.

package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// TestHashFileFIFOSwappedIn: a file replaced by a FIFO between the walk's lstat and the read is
// a change (errChanged), at once: the open must not wait for a writer that never comes.
func TestHashFileFIFOSwappedIn(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte("content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := platform.Lstat(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var n atomic.Int64
		_, err := hashFile(name, want, nil, &n)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errChanged) {
			t.Fatalf("hashFile of a FIFO swapped in: %v, want errChanged", err)
		}
	case <-time.After(5 * time.Second):
		// Unblock the open so the goroutine ends, then fail.
		if w, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("hashFile blocked on a FIFO swapped in after the lstat")
	}
}
