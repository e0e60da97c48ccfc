package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/agent-rewind/rewind/tools/bench/baseline"
	"github.com/agent-rewind/rewind/tools/bench/measure"
	"github.com/agent-rewind/rewind/tools/bench/workspace"
)

// The watch suite (issue 17, "At the cost of what changed"): checkpoints with the change watcher
// running, against find's lstat of every entry, on the generated workspace:
//
//	checkpoint, no change, watcher running       vs find   goal <= 0.1
//	checkpoint after 10 changes, watcher running  vs find   goal <= 0.15
//	checkpoints that used the watcher's hint      of all    goal: all
//	the watcher's resident memory (VmHWM)                   goal <= 50 MiB
//
// These are "agent-rewind checkpoint" runs (the automatic checkpoints of the hooks take the same
// path); the snapshot suite measures the same checkpoints without the watcher.
func init() {
	register(Suite{
		Name:        "watch",
		Description: "checkpoints with the change watcher running vs find on the generated workspace, and the watcher's memory",
		Modules:     []string{"snapshot", "cli"},
		Run:         runWatch,
	})
}

func runWatch(ctx context.Context, b *Bench) error {
	agent, err := b.Agent(ctx)
	if err != nil {
		return err
	}
	if err := agent.Require(ctx, b, []string{"checkpoint"}, []string{"watch", "status"}); err != nil {
		return err
	}
	ws, res, err := b.FreshWorkspace(ctx, b.Shape())
	if err != nil {
		return err
	}
	defer measure.Run(agent.Command(context.Background(), ws, "watch", "stop"))
	var hinted, total int64
	var reasons []string
	checkpoint := func(ctx context.Context) (measure.Sample, error) {
		r, err := measure.Run(agent.Command(ctx, ws, "--json", "checkpoint"))
		if err != nil {
			return r.Sample, err
		}
		var out struct {
			Walk struct{ Mode, Reason string }
		}
		if err := json.Unmarshal(r.Stdout, &out); err != nil {
			return r.Sample, fmt.Errorf("checkpoint --json: %v: %.200q", err, r.Stdout)
		}
		total++
		if out.Walk.Mode == "changed" {
			hinted++
		} else {
			reasons = append(reasons, out.Walk.Reason)
		}
		return r.Sample, nil
	}
	// The first checkpoint starts the watcher and walks; the second takes its first token.
	for range 2 {
		if _, err := checkpoint(ctx); err != nil {
			return err
		}
	}
	hinted, total, reasons = 0, 0, nil
	find := measure.Arm{Name: "find (lstat of every entry)", Run: func(ctx context.Context) (measure.Sample, error) {
		return baseline.Find(ctx, ws)
	}}
	reps := b.Reps(9, 5)
	b.Logf("no-change checkpoint with the watcher vs find, %d each", reps)
	nochange, err := measure.Alternate(ctx, reps, measure.Arm{Name: "agent-rewind checkpoint (no change, watcher running)", Run: checkpoint}, find)
	if err != nil {
		return err
	}
	b.Ratio("checkpoint_no_change_watcher", nochange[0], nochange[1], AtMost(0.1), "")
	seed := uint64(3000)
	b.Logf("10-change checkpoint with the watcher vs find, %d each", reps)
	change10, err := measure.Alternate(ctx, reps, measure.Arm{
		Name: "agent-rewind checkpoint (10 changed files, watcher running)",
		Setup: func(context.Context) error {
			seed++
			_, err := workspace.MakeChanges(ws, 10, seed)
			return err
		},
		Run: checkpoint,
	}, find)
	if err != nil {
		return err
	}
	b.Ratio("checkpoint_10_changes_watcher", change10[0], change10[1], AtMost(0.15), "")
	b.Count("watcher_used", hinted, total, "checkpoints", "checkpoints measured above", Exactly(float64(total)),
		"checkpoints that looked only at what the watcher reported; the others walked: "+strings.Join(reasons, "; "))

	r, err := measure.Run(agent.Command(ctx, ws, "--json", "watch", "status"))
	if err != nil {
		return err
	}
	var st struct {
		Running bool `json:"running"`
		PID     int  `json:"pid"`
		Watched int  `json:"watchedDirs"`
	}
	if err := json.Unmarshal(r.Stdout, &st); err != nil || !st.Running {
		return fmt.Errorf("watch status --json: no running watcher (%v): %.200q", err, r.Stdout)
	}
	hwm, err := procKiB(st.PID, "VmHWM")
	if err != nil {
		return err
	}
	b.Value("watcher_rss", float64(hwm)/1024, "MiB", fmt.Sprintf("the watcher of %d files in %d directories", res.Shape.Files, st.Watched), nil, AtMost(50),
		"peak resident set (VmHWM) of the watcher process after the checkpoints above")
	return nil
}

// procKiB reads a "Name:  N kB" line of /proc/<pid>/status.
func procKiB(pid int, name string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("the watcher's memory: %w (Linux only)", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, name)
}
