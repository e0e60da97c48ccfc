package main

import "testing"

// stopProcess skips on Windows: it has no SIGSTOP (and the watcher it stops is Linux only).
func stopProcess(t *testing.T, pid int) {
	t.Helper()
	t.Skip("Windows has no SIGSTOP to stop a process with")
}
