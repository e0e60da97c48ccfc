package snapshot

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRestoreNeverModifiesHardLinkedFile: a workspace file that is a hard link to a file outside
// the workspace (pnpm's store, a `cp -al` copy) gets the target's mode, content, or both, on a new
// inode: the outside file keeps its own mode and content. On Windows the mode is the read-only
// attribute, which belongs to the file, not to one of its names, as a POSIX mode does: the modes
// differ in their write bit so that the case means the same there.
func TestRestoreNeverModifiesHardLinkedFile(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		content, liveContent string
		mode, liveMode       uint32
	}{
		{"mode", "same\n", "same\n", 0o4555, 0o600},
		{"content", "target\n", "outside\n", 0o644, 0o644},
		{"both", "target\n", "outside\n", 0o755, 0o600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, out := t.TempDir(), t.TempDir()
			a := filepath.Join(root, "a")
			os.WriteFile(a, []byte(tc.content), 0o600)
			if err := syscall.Chmod(a, tc.mode); err != nil {
				t.Fatal(err)
			}
			mode := perm(t, a) // what the system keeps of tc.mode
			s := mustOpen(t, root, Options{})
			c1, err := s.Checkpoint(ctx, "C1")
			if err != nil {
				t.Fatal(err)
			}
			secret := filepath.Join(out, "secret")
			os.WriteFile(secret, []byte(tc.liveContent), 0o600)
			if err := syscall.Chmod(secret, tc.liveMode); err != nil {
				t.Fatal(err)
			}
			liveMode := perm(t, secret)
			os.Remove(a)
			if err := os.Link(secret, a); err != nil {
				t.Skipf("hard links not supported here: %v", err)
			}
			if _, err := s.Rewind(ctx, c1.ID, RestoreOptions{}); err != nil {
				t.Fatal(err)
			}
			st, sa := lstat(t, secret), lstat(t, a)
			if got, _ := os.ReadFile(secret); string(got) != tc.liveContent || st.Mode&0o7777 != liveMode {
				t.Fatalf("the file outside the workspace was changed through its hard link: mode %04o, content %q", st.Mode&0o7777, got)
			}
			if got, _ := os.ReadFile(a); string(got) != tc.content || sa.Mode&0o7777 != mode || sa.Ino == st.Ino {
				t.Fatalf("a not restored on a new inode: mode %04o, content %q, same inode %v", sa.Mode&0o7777, got, sa.Ino == st.Ino)
			}
		})
	}
}

// TestModeRestoredInPlaceWithoutOtherLinks: a file with no other link keeps its inode when only
// its mode is restored (no needless copy). The write bit changes, which Windows keeps too (the
// read-only attribute).
func TestModeRestoredInPlaceWithoutOtherLinks(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a")
	put(t, root, "a", "same\n", 0o755)
	mode := perm(t, a)
	s := mustOpen(t, root, Options{})
	c1, _ := s.Checkpoint(ctx, "C1")
	if err := os.Chmod(a, 0o555); err != nil {
		t.Fatal(err)
	}
	before := lstat(t, a)
	if _, err := s.Rewind(ctx, c1.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	after := lstat(t, a)
	if after.Mode&0o7777 != mode || after.Ino != before.Ino {
		t.Fatalf("mode %04o, want %04o; inode kept %v", after.Mode&0o7777, mode, after.Ino == before.Ino)
	}
}
