package workspacetest

import (
	"os"
	"path/filepath"
	"testing"
)

// Put writes content to root/rel with mode, creating its folders; the mode is set again after
// the write, since the umask narrows what a create gives.
func Put(t testing.TB, root, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}
