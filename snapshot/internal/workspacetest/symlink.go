package workspacetest

import (
	"os"
	"runtime"
	"testing"
)

// Symlink makes a symlink at name pointing to target. Where the system cannot make one the
// test is skipped, saying why: Windows makes symlinks only with Developer Mode or a privilege,
// and Wine 8 makes one it then cannot find (an lstat of it fails). Elsewhere a failure fails the
// test.
func Symlink(t testing.TB, target, name string) {
	t.Helper()
	err := os.Symlink(target, name)
	if err == nil {
		_, err = os.Lstat(name)
	}
	if err != nil && runtime.GOOS == "windows" {
		t.Skipf("no symlinks here (Windows needs Developer Mode or a privilege; Wine 8 makes none it can find again): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}
