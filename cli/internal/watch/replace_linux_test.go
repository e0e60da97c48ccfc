package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// TestEndUnansweringLeavesOthers: a lock held by a process that is not a watcher of its own
// (here the test itself, as the guard server holds it for its watchers) is never ended; a free
// lock needs nothing ended; a lock whose holder wrote no pid is named.
func TestEndUnansweringLeavesOthers(t *testing.T) {
	store, root := filepath.Join(t.TempDir(), "store"), t.TempDir()
	must(t, os.MkdirAll(dir(store), 0o700))
	name := filepath.Join(dir(store), "lock")
	if err := endUnanswering(store, root); err != nil {
		t.Fatalf("with no watcher: %v", err)
	}
	lock, err := unixsock.Lock(name)
	must(t, err)
	defer lock.Close()
	if err := endUnanswering(store, root); err == nil || !strings.Contains(err.Error(), "did not write its pid") {
		t.Fatalf("a holder with no pid: %v", err)
	}
	must(t, writePID(lock))
	if err := endUnanswering(store, root); err == nil || !strings.Contains(err.Error(), "not a watcher process of its own") {
		t.Fatalf("a holder that is not a watcher: %v", err)
	}
}
