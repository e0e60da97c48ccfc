//go:build linux || darwin

package workspacetest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Put makes the folders, writes the content, and gives the file its mode whatever the umask.
func TestPut(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	root := t.TempDir()
	Put(t, root, "a/b/run.sh", "echo hi\n", 0o755)
	fi, err := os.Stat(filepath.Join(root, "a", "b", "run.sh"))
	if err != nil || fi.Mode() != 0o755 || fi.Size() != 8 {
		t.Fatalf("put: %v %v", fi, err)
	}
}
