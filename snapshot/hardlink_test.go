package snapshot

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRestoreNeverModifiesHardLinkedFile: a workspace file that is a hard link to a file outside
// the workspace (pnpm's store, a `cp -al` copy) gets the target's mode, content, or both, on a new
// inode: the outside file keeps its own mode and content.
func TestRestoreNeverModifiesHardLinkedFile(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		content, liveContent string
		mode, liveMode       uint32
	}{
		{"mode", "same\n", "same\n", 0o4777, 0o600},
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
			os.Remove(a)
			if err := os.Link(secret, a); err != nil {
				t.Skipf("hard links not supported here: %v", err)
			}
			if _, err := s.Rewind(ctx, c1.ID, RestoreOptions{}); err != nil {
				t.Fatal(err)
			}
			var st, sa syscall.Stat_t
			syscall.Stat(secret, &st)
			syscall.Lstat(a, &sa)
			if got, _ := os.ReadFile(secret); string(got) != tc.liveContent || uint32(st.Mode)&0o7777 != tc.liveMode {
				t.Fatalf("the file outside the workspace was changed through its hard link: mode %04o, content %q", st.Mode&0o7777, got)
			}
			if got, _ := os.ReadFile(a); string(got) != tc.content || uint32(sa.Mode)&0o7777 != tc.mode || sa.Ino == st.Ino {
				t.Fatalf("a not restored on a new inode: mode %04o, content %q, same inode %v", sa.Mode&0o7777, got, sa.Ino == st.Ino)
			}
		})
	}
}

// TestModeRestoredInPlaceWithoutOtherLinks: a file with no other link keeps its inode when only
// its mode is restored (no needless copy).
func TestModeRestoredInPlaceWithoutOtherLinks(t *testing.T) {
	root := t.TempDir()
	put(t, root, "a", "same\n", 0o755)
	s := mustOpen(t, root, Options{})
	c1, _ := s.Checkpoint(ctx, "C1")
	os.Chmod(filepath.Join(root, "a"), 0o600)
	var before, after syscall.Stat_t
	syscall.Lstat(filepath.Join(root, "a"), &before)
	if _, err := s.Rewind(ctx, c1.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	syscall.Lstat(filepath.Join(root, "a"), &after)
	if after.Mode&0o7777 != 0o755 || after.Ino != before.Ino {
		t.Fatalf("mode %04o, inode kept %v", after.Mode&0o7777, after.Ino == before.Ino)
	}
}
