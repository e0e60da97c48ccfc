package workspacetest

import "testing"

// Mkfifo skips the test on Windows: its named pipes live in their own namespace (\\.\pipe\),
// never in a folder, so a walk there meets no FIFO.
func Mkfifo(t testing.TB, name string, perm uint32) {
	t.Helper()
	t.Skipf("Windows has no FIFOs in a folder (its named pipes live under \\\\.\\pipe\\): nothing to make at %s", name)
}
