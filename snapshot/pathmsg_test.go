package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A workspace holding a path longer than the system allows fails the checkpoint with a message
// that fits on a screen and gives the advice that works (.rewindignore), not "make it readable".
func TestOverlongPathMessage(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows names paths up to 32,767 characters (winpath.Long): this tree of about 5,000 is within the limit, so there is no overlong path to report")
	}
	root := t.TempDir()
	t.Chdir(root) // build the deep tree relatively: its absolute path is too long to name
	deep := strings.Repeat("d", 200)
	for range 25 {
		if err := os.Mkdir(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chdir(deep); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile("f", []byte("x"), 0o644)
	t.Chdir(root)
	s := mustOpen(t, root, Options{StateDir: filepath.Join(t.TempDir(), "state")})
	_, err := s.Checkpoint(context.Background(), "deep")
	if err == nil {
		t.Fatal("a checkpoint of a path longer than the system allows succeeded")
	}
	msg := err.Error()
	if len(msg) > 600 || !strings.Contains(msg, IgnoreFile) || strings.Contains(msg, "make it readable") || !strings.Contains(msg, "longer than") {
		t.Fatalf("message (%d bytes): %s", len(msg), msg)
	}
}
