//go:build linux

package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// smallFS mounts a 1 MiB tmpfs and returns its path, or skips when mounting is not allowed here
// (it needs root, or CAP_SYS_ADMIN).
func smallFS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): skipping", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestFullDiskLeavesNothingBehind: a checkpoint that runs out of space while storing new contents
// (in a pack, as loose objects, or in chunks) fails with ENOSPC and removes what it had written: no partial
// pack, no temporary object stays in the store. Once space is freed, checkpoints work.
func TestFullDiskLeavesNothingBehind(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files int
		size  int
	}{
		{"pack", objects.FewFiles + 36, 20 << 10},     // 100 small files, 2 MB: one pack
		{"loose", 6, 300 << 10},                       // a few files, staged one by one
		{"large", 2, objects.SmallFile + (100 << 10)}, // streamed to a staging file
		{"chunked", 1, objects.ChunkedFile + 1},       // stored in chunks (random: zeros would dedup)
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := filepath.Join(smallFS(t), "state")
			root := t.TempDir()
			for i := range tc.files {
				b := make([]byte, tc.size)
				if tc.size > objects.ChunkedFile {
					b = randomBytes(tc.size, uint64(i))
				}
				copy(b, fmt.Sprintf("file %d", i))
				if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%03d", i)), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s := mustOpen(t, root, Options{StateDir: state})
			_, err := s.Checkpoint(ctx, "too big")
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("checkpoint on a full disk: %v", err)
			}
			var left []string
			for _, d := range []string{"packs", "objects/tmp", "chunklists"} {
				names, _ := platform.ReadDirNames(filepath.Join(state, d))
				for _, n := range names {
					left = append(left, d+"/"+n)
				}
			}
			if len(left) != 0 {
				t.Fatalf("the failed checkpoint left in the store: %s", strings.Join(left, ", "))
			}
			for i := 1; i < tc.files; i++ {
				os.Remove(filepath.Join(root, fmt.Sprintf("f%03d", i)))
			}
			os.WriteFile(filepath.Join(root, "f000"), []byte("small now"), 0o644)
			if _, err := s.Checkpoint(ctx, "fits"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
