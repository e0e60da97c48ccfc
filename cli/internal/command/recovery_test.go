package command

import (
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

// TestRecoveryTextRestore: a finished restore of paths is told as one, naming its paths; it does
// not claim the workspace moved to the checkpoint, as a rewind's does.
func TestRecoveryTextRestore(t *testing.T) {
	j := snapshot.Journal{Op: "restore", To: "aaaa", Safety: "bbbb", Paths: []string{"src/a.go", "docs"}, Time: time.Now()}
	got := recoveryText(&snapshot.Recovery{Journal: j, Outcome: "completed", Changes: 2})
	if !strings.Contains(got, "restore of src/a.go, docs from aaaa") || strings.Contains(got, "workspace is now") {
		t.Fatalf("completed: %q", got)
	}
	got = recoveryText(&snapshot.Recovery{Journal: j, Outcome: "undone", Changes: 1})
	if !strings.Contains(got, "put back from the safety checkpoint bbbb") {
		t.Fatalf("undone: %q", got)
	}
}
