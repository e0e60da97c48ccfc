//go:build linux || darwin

package restore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFlushSkipsWhatIsNotRestoredContent: a FIFO put where a restored file was neither blocks
// nor fails the flush, and neither does a path gone since or a symlink.
func TestFlushSkipsWhatIsNotRestoredContent(t *testing.T) {
	w := newWorkspace(t)
	w.put("d/f.txt", "f", 0o644)
	if err := syscall.Mkfifo(filepath.Join(w.root, "d/fifo"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	os.Symlink("f.txt", filepath.Join(w.root, "d/ln"))
	if err := Flush(w.root, map[string]bool{"d/f.txt": true, "d/fifo": true, "d/ln": true, "gone/x": true, "d": true}); err != nil {
		t.Fatal(err)
	}
}
