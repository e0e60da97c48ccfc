package snapshot

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGenerateTree writes genTree's workspace into $REWIND_GEN_DIR ($REWIND_GEN_FILES files,
// default 2,000) for measuring by hand; it is skipped otherwise.
func TestGenerateTree(t *testing.T) {
	dir := os.Getenv("REWIND_GEN_DIR")
	if dir == "" {
		t.Skip("set REWIND_GEN_DIR to generate a workspace there")
	}
	n := 2000
	fmt.Sscan(os.Getenv("REWIND_GEN_FILES"), &n)
	t.Logf("%d files, %d bytes", n, genTree(t, dir, n, 1))
}

// TestMeasureTree measures, on the folder $REWIND_MEASURE_DIR, the operations the goals
// are stated for (first checkpoint; best of 3 for: no-change checkpoint, checkpoint after 10
// changed files, rewind of 10 changed files) and logs them, for comparing by hand with a shadow
// git and `find` on the same tree. Skipped unless the variable is set.
func TestMeasureTree(t *testing.T) {
	dir := os.Getenv("REWIND_MEASURE_DIR")
	if dir == "" {
		t.Skip("set REWIND_MEASURE_DIR to measure checkpoints of that folder")
	}
	s := mustOpen(t, dir, Options{})
	t0 := time.Now()
	first, err := s.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first checkpoint: %v (%d files, %d bytes)", time.Since(t0), first.Counts.Files, first.Counts.Bytes)
	files := make([]string, 0, 10)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.Contains(filepath.ToSlash(p), "/.rewind/") && len(files) < 10 && strings.HasSuffix(p, "0.txt") {
			files = append(files, p)
		}
		return nil
	})
	best := func(name string, op func(i int) time.Duration) {
		m := time.Hour
		for i := 0; i < 3; i++ {
			m = min(m, op(i))
		}
		t.Logf("%s: best of 3 %v", name, m)
	}
	change := func(i int) {
		for _, f := range files {
			os.WriteFile(f, fmt.Appendf(nil, "change %d\n", i), 0o644)
		}
		time.Sleep(150 * time.Millisecond) // past racyWindow, as between real agent steps
		backdateIndex(t, s)
	}
	best("no-change checkpoint", func(int) time.Duration {
		t0 := time.Now()
		if _, err := s.Checkpoint(ctx, "again"); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	})
	best("10-change checkpoint", func(i int) time.Duration {
		change(i)
		t0 := time.Now()
		if _, err := s.Checkpoint(ctx, "ten"); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	})
	best("rewind of 10 changed files", func(i int) time.Duration {
		change(i + 10)
		t0 := time.Now()
		if _, err := s.Rewind(ctx, first.ID, RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	})
}
