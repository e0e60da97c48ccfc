package main

import (
	"errors"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// stateDir returns the state directory (the store) of the workspace at ws. Every end-to-end test
// that reads or damages the store finds it here, so the store can move without touching them.
// The store lives outside the workspace, under REWIND_STATE_DIR (TestMain points it at a
// throwaway folder; a test may t.Setenv its own), found by the folder's identity. A workspace
// that has no store yet gets one, as its first checkpoint would make it (so a test can put an
// effects.json there first); hasStore asks without making one.
func stateDir(t testing.TB, ws string) string {
	t.Helper()
	old := workspace.Log
	workspace.Log = testLog{t}
	defer func() { workspace.Log = old }()
	w, err := workspace.Open(ws)
	if errors.Is(err, workspace.ErrNotInitialized) {
		w, err = workspace.Init(ws)
	}
	if err != nil {
		t.Fatalf("the store of %s: %v", ws, err)
	}
	return w.Meta
}

// hasStore reports whether the workspace at ws has a store, making none.
func hasStore(t testing.TB, ws string) bool {
	t.Helper()
	return workspace.HasStore(ws)
}

// testLog sends the workspace package's notices to the test log.
type testLog struct{ t testing.TB }

func (l testLog) Write(b []byte) (int, error) { l.t.Log(string(b)); return len(b), nil }
