package watch

import (
	"os"
	"testing"
)

// TestErrFileLeavesNothing: the watcher's standard error at start can be written and read back,
// and is gone once closed.
func TestErrFileLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := errFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("agent-rewind: the reason\n")); err != nil {
		t.Fatal(err)
	}
	if got := lastLine(f); got != "the reason" {
		t.Errorf("lastLine = %q", got)
	}
	f.Close()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("left in %s: %v %v", dir, ents, err)
	}
}
