package platform

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestJunction: a junction (a mount point reparse point, which any user may make) is reported
// as a reparse point, not a folder, and OpenDir does not follow it.
func TestJunction(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "inside"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "junction")
	if out, err := exec.Command("cmd", "/c", "mklink", "/J", link, target).CombinedOutput(); err != nil {
		t.Skipf("mklink /J: %v %s", err, out)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Skipf("the junction was made but reads back as %v (Wine 8 makes one it then cannot find, as with symlinks)", err)
	}
	st, err := Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode&syscall.S_IFMT != typeReparse {
		t.Fatalf("Lstat(junction) mode %#o, want the reparse type %#o", st.Mode, typeReparse)
	}
	if fd, names, err := OpenDir(link, ""); err == nil || !strings.Contains(err.Error(), "reparse point") {
		CloseDir(fd)
		t.Fatalf("OpenDir(junction) = %q, %v: want it refused as a reparse point", names, err)
	}
}
