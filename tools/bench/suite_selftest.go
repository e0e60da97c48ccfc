package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/baseline"
	"github.com/agent-rewind/rewind/tools/bench/measure"
	"github.com/agent-rewind/rewind/tools/bench/workspace"
)

// The harness self-test needs no agent-rewind module: it exercises the generator, the A/B
// alternation, child-process measurement and every artifact field for real, on the two stat
// walks that the snapshot suite uses as its floor and on the process-start floor.
func init() {
	register(Suite{
		Name:        "harness-selftest",
		Description: "the harness itself: stat walk (WalkDir+lstat vs find) on a generated tree, and the process-start floor (true)",
		Run:         runSelftest,
	})
}

func runSelftest(ctx context.Context, b *Bench) error {
	files := b.Reps(20_000, 3_000)
	dir, res, err := b.Workspace(ctx, workspace.Shape{Files: files, Bytes: int64(files) * 4_000, Seed: 1})
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the bench executable (for its statwalk subcommand): %w", err)
	}
	var seen int64
	walk := measure.Arm{Name: "bench statwalk: WalkDir + lstat, child process", Run: func(ctx context.Context) (measure.Sample, error) {
		r, err := measure.Run(exec.CommandContext(ctx, self, "statwalk", dir))
		if err != nil {
			return r.Sample, err
		}
		seen, err = strconv.ParseInt(strings.TrimSpace(string(r.Stdout)), 10, 64)
		return r.Sample, err
	}}
	find := measure.Arm{Name: "find -printf '%s\\n' (lstat of every entry)", Run: func(ctx context.Context) (measure.Sample, error) {
		return baseline.Find(ctx, dir)
	}}
	ss, err := measure.Alternate(ctx, b.Reps(9, 5), walk, find)
	if err != nil {
		return err
	}
	b.Ratio("stat_walk_walkdir_vs_find", ss[0], ss[1], NoGoal,
		"the two stat-walk floors on the same tree, alternated; the snapshot suite divides by the faster")
	want := int64(1 + res.Dirs + res.Regular + res.Symlinks)
	b.Count("stat_walk_entries", seen, want, "entries", "entries generated (root, directories, files, symlinks)", Exactly(float64(want)),
		"the WalkDir walker saw every generated entry")

	// The process-start floor: the same measurement the guard suite compares with.
	n := b.Reps(300, 60)
	var walls []time.Duration
	var peak int64
	for range n {
		s, err := baseline.True(ctx)
		if err != nil {
			return err
		}
		walls = append(walls, s.Wall)
		peak = max(peak, s.MaxRSS)
	}
	st := &ArmStat{Label: "true(1), " + strconv.Itoa(n) + " runs", Stats: measure.Summarize(walls, peak)}
	b.Value("process_start_p50", ms(measure.Percentile(walls, 50)), "ms", "", st, NoGoal, "wall per process of true(1): the floor for per-process figures")
	b.Value("process_start_p99", ms(measure.Percentile(walls, 99)), "ms", "", st, NoGoal, "")
	return nil
}

// ms returns d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
