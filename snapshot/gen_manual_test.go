package snapshot

import (
	"fmt"
	"os"
	"testing"
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

// TestMeasureTree checkpoints $REWIND_MEASURE_DIR twice (first, then no change) and logs the
// times, for comparing by hand with a shadow git on the same tree; skipped otherwise.
func TestMeasureTree(t *testing.T) {
	dir := os.Getenv("REWIND_MEASURE_DIR")
	if dir == "" {
		t.Skip("set REWIND_MEASURE_DIR to measure a checkpoint of that folder")
	}
	s := mustOpen(t, dir, Options{})
	for _, label := range []string{"first", "no change"} {
		c, err := s.Checkpoint(ctx, label)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %v, %d files, %d hashed, %d new bytes", label, c.Elapsed, c.Counts.Files, c.Hashed, c.NewBytes)
		backdateIndex(t, s)
	}
}
