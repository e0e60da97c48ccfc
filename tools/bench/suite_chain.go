package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// The chain suite (issue 2): durable appends per second against the floor of a raw
// write+fsync per line, and "agent-rewind chain verify --file" on a 1M-entry chain (goal under
// 2 s) against sha256sum of the same file.
//
// Making a million entries through the CLI would take hours of fsyncs, so the suite reaches the
// hashchain module through two seams, set by a small file that imports it (see wire_*.go):
var (
	// chainBuild writes a valid chain of n entries at path, as fast as the module can (one
	// fsync at the end is enough). Nil until wired.
	chainBuild func(path string, n int) error
	// chainAppendDurable appends n entries to the chain at path (creating it), each one durable
	// before the next, as the module's Append is. Nil until wired.
	chainAppendDurable func(path string, n int) error
)

func init() {
	register(Suite{
		Name:        "chain",
		Description: "hash chain: durable appends/s vs a raw fsync floor; chain verify on 1M entries vs sha256sum",
		Modules:     []string{"hashchain", "cli"},
		Run:         runChain,
	})
}

func runChain(ctx context.Context, b *Bench) error {
	if chainBuild == nil || chainAppendDurable == nil {
		return b.Skip("hashchain is not wired into tools/bench yet: set chainBuild and chainAppendDurable (suite_chain.go) from a wire_hashchain.go that imports the module")
	}
	agent, err := b.Agent(ctx)
	if err != nil {
		return err
	}
	if err := agent.Require(ctx, b, []string{"chain", "verify"}); err != nil {
		return err
	}
	sha, err := exec.LookPath("sha256sum")
	if err != nil {
		return fmt.Errorf("sha256sum is not on PATH (coreutils): it is the verify floor")
	}
	dir, err := b.TempDir("chain")
	if err != nil {
		return err
	}

	// Durable appends.
	n := b.Reps(500, 100)
	oursDir := filepath.Join(dir, "appends") // the chain, its sidecar and its anchor: removed whole
	ours := filepath.Join(oursDir, "chain.jsonl")
	floor := filepath.Join(dir, "floor.jsonl")
	line := []byte(`{"seq":0,"time":"2026-11-30T00:00:00Z","kind":"checkpoint","data":{"id":"a1b2c3d4e5f6","manifest":"` + strings.Repeat("0", 64) + `"},"prev":"` + strings.Repeat("0", 64) + `"}` + "\n")
	appends, err := measure.Alternate(ctx, b.Reps(5, 3),
		measure.Arm{
			Name: fmt.Sprintf("hashchain: %d durable appends", n),
			Setup: func(context.Context) error {
				if err := os.RemoveAll(oursDir); err != nil {
					return err
				}
				return os.Mkdir(oursDir, 0o700)
			},
			Run: func(context.Context) (measure.Sample, error) {
				return measure.Timed(func() error { return chainAppendDurable(ours, n) })
			},
		},
		measure.Arm{
			Name:  fmt.Sprintf("floor: %d × (write a %d-byte line + fsync)", n, len(line)),
			Setup: func(context.Context) error { return removeIfExists(floor) },
			Run: func(context.Context) (measure.Sample, error) {
				return measure.Timed(func() error { return fsyncLines(floor, line, n) })
			},
		})
	if err != nil {
		return err
	}
	b.Value("durable_appends_per_s", float64(n)/appends[0].MedianWall().Seconds(), "appends/s", appends[1].Name, arm(appends[0]), NoGoal, "")
	b.Ratio("durable_append_vs_fsync_floor", appends[0], appends[1], NoGoal, "time for the same number of appends")

	// Verify.
	entries := b.Reps(1_000_000, 100_000)
	big := filepath.Join(dir, "verify.jsonl")
	b.Logf("building a %d-entry chain", entries)
	if err := chainBuild(big, entries); err != nil {
		return fmt.Errorf("build a %d-entry chain: %w", entries, err)
	}
	sum, size, err := fileSHA256(big)
	if err != nil {
		return err
	}
	b.GeneratedInput(fmt.Sprintf("chain entries=%d", entries), "chainBuild (hashchain)", map[string]int{"entries": entries}, sum, size)
	verify, err := measure.Alternate(ctx, b.Reps(5, 3),
		measure.Arm{Name: fmt.Sprintf("agent-rewind chain verify --file (%d entries)", entries), Run: func(ctx context.Context) (measure.Sample, error) {
			r, err := measure.Run(agent.Command(ctx, dir, "chain", "verify", "--file", big))
			return r.Sample, err
		}},
		measure.Arm{Name: "sha256sum of the same file", Run: func(ctx context.Context) (measure.Sample, error) {
			r, err := measure.Run(exec.CommandContext(ctx, sha, big))
			return r.Sample, err
		}})
	if err != nil {
		return err
	}
	goal := AtMost(2)
	note := ""
	if entries != 1_000_000 {
		goal, note = NoGoal, "quick run: the 2 s goal is for 1M entries"
	}
	b.Value("verify_seconds", verify[0].MedianWall().Seconds(), "s", fmt.Sprintf("%d entries, %d bytes", entries, size), arm(verify[0]), goal, note)
	b.Value("verify_entries_per_s", float64(entries)/verify[0].MedianWall().Seconds(), "entries/s", "", nil, NoGoal, "")
	b.Ratio("verify_vs_sha256sum", verify[0], verify[1], NoGoal, "")
	b.Value("verify_peak_rss", float64(verify[0].PeakRSS())/(1<<20), "MiB", "bounded memory: independent of the chain's length", nil, NoGoal, "")
	return nil
}

// fsyncLines appends line to path n times, each followed by fsync: the least a durable
// append can cost.
func fsyncLines(path string, line []byte, n int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	for range n {
		if _, err := f.Write(line); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
