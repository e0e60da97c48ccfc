package main

import (
	"path/filepath"
	"testing"
)

// stateDir returns the state directory (the store) of the workspace at ws. Every end-to-end test
// that reads or damages the store finds it here, so the store can move without touching them.
func stateDir(t testing.TB, ws string) string {
	t.Helper()
	return filepath.Join(ws, ".rewind")
}
