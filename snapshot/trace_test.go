package snapshot

import (
	"os"
	"sync/atomic"
	"testing"
	"time"
)

func TestTraceWalkProfile(t *testing.T) {
	dir := os.Getenv("REWIND_MEASURE_DIR")
	if dir == "" {
		t.Skip()
	}
	s := mustOpen(t, dir, Options{})
	for _, par := range []int{1, 2, 1, 2} {
		best := time.Hour
		for i := 0; i < 20; i++ {
			var seen atomic.Int64
			t0 := time.Now()
			walk(ctx, s.root, s.stateRel, (*Ignore)(nil), par, &seen)
			best = min(best, time.Since(t0))
		}
		t.Logf("par %d best %v", par, best)
	}
}
