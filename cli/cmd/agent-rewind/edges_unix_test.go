//go:build unix

package main

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestRewindModeNeverChangesHardLinkedFile is the repro: restoring the mode of a file that
// is now a hard link to a file outside the workspace gives the workspace file a new inode; the
// outside file keeps its mode.
func TestRewindModeNeverChangesHardLinkedFile(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	secret := filepath.Join(out, "secret")
	bash(t, dir, `echo same > `+secret+`; chmod 600 `+secret+`; echo same > a; chmod 4777 a`)
	c1 := jsonOK[cpOut](t, dir, "checkpoint", "C1")
	bash(t, dir, `rm a; ln `+secret+` a`)
	ok(t, dir, "rewind", c1.ID)
	var st, sa syscall.Stat_t
	syscall.Stat(secret, &st)
	syscall.Lstat(filepath.Join(dir, "a"), &sa)
	if st.Mode&0o7777 != 0o600 || sa.Mode&0o7777 != 0o4777 || st.Ino == sa.Ino {
		t.Fatalf("outside file mode %04o (want 0600), a mode %04o (want 4777), same inode %v", st.Mode&0o7777, sa.Mode&0o7777, st.Ino == sa.Ino)
	}
}
