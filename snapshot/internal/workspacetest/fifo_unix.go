//go:build unix

package workspacetest

import (
	"syscall"
	"testing"
)

// Mkfifo makes a FIFO (a named pipe in a folder) at name with mode perm.
func Mkfifo(t testing.TB, name string, perm uint32) {
	t.Helper()
	if err := syscall.Mkfifo(name, perm); err != nil {
		t.Fatal(err)
	}
}
