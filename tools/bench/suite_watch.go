package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agent-rewind/rewind/tools/bench/baseline"
	"github.com/agent-rewind/rewind/tools/bench/measure"
	"github.com/agent-rewind/rewind/tools/bench/workspace"
)

// The watch suite (issue 17, "At the cost of what changed"): checkpoints with the change watcher
// running, against find's lstat of every entry, on the generated workspace:
//
//	automatic checkpoint (the hook: agent-rewind-hook guard --checkpoint), no change         vs find   goal <= 0.1
//	automatic checkpoint (the hook: agent-rewind-hook guard --checkpoint), 10 changed files  vs find   goal <= 0.15
//	"agent-rewind checkpoint", no change / 10 changed files                                  vs find   (reported)
//	checkpoints that used the watcher's hint      of all                              goal: all
//	rewind of 10 changes, watcher running         vs git reset --hard && clean        goal <= 0.8 (issue 29)
//	rewinds whose safety checkpoint used the hint of all                              goal: all
//	the watcher's resident memory (VmHWM)                                             goal <= 50 MiB
//
// The hook is what runs before every tool call an agent makes; "checkpoint" is the command a
// person or the MCP tool runs, which always writes a checkpoint; the snapshot suite measures
// the same checkpoints without the watcher.
func init() {
	register(Suite{
		Name:        "watch",
		Description: "checkpoints and a rewind with the change watcher running vs find and shadow git on the generated workspace, and the watcher's memory",
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
	last := "" // the newest checkpoint's id
	checkpoint := func(ctx context.Context) (measure.Sample, error) {
		r, err := measure.Run(agent.Command(ctx, ws, "--json", "checkpoint"))
		if err != nil {
			return r.Sample, err
		}
		var out struct {
			ID   string
			Walk struct{ Mode, Reason string }
		}
		if err := json.Unmarshal(r.Stdout, &out); err != nil {
			return r.Sample, fmt.Errorf("checkpoint --json: %v: %.200q", err, r.Stdout)
		}
		last = out.ID
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
	// What the integrations' hooks run: agent-rewind-hook (suite_guard.go builds it).
	hookAgent, err := hookBinary(ctx, b, agent)
	if err != nil {
		return err
	}
	calls := 0
	hook := func(ctx context.Context) (measure.Sample, error) {
		calls++
		in, err := json.Marshal(map[string]any{
			"session_id": "bench-session", "cwd": ws, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": "go test ./..."}, "tool_use_id": fmt.Sprintf("toolu_watch_%06d", calls),
		})
		if err != nil {
			return measure.Sample{}, err
		}
		cmd := hookAgent.Command(ctx, ws, "guard", "--checkpoint")
		cmd.Stdin = bytes.NewReader(in)
		r, err := measure.Run(cmd)
		if err == nil && len(r.Stdout)+len(r.Stderr) > 0 {
			err = fmt.Errorf("guard --checkpoint printed %.200q / %.200q: the automatic checkpoint failed", r.Stdout, r.Stderr)
		}
		return r.Sample, err
	}
	seed := uint64(3000)
	changes := func(context.Context) error {
		seed++
		_, err := workspace.MakeChanges(ws, 10, seed)
		return err
	}
	reps := b.Reps(9, 5)
	b.Logf("no-change automatic checkpoint and checkpoint with the watcher vs find, %d each", reps)
	nochange, err := measure.Alternate(ctx, reps,
		measure.Arm{Name: "agent-rewind-hook guard --checkpoint (no change, watcher running)", Run: hook},
		measure.Arm{Name: "agent-rewind checkpoint (no change, watcher running)", Run: checkpoint}, find)
	if err != nil {
		return err
	}
	b.Ratio("auto_checkpoint_no_change_watcher", nochange[0], nochange[2], AtMost(0.1), "the hook before a tool call")
	b.Ratio("checkpoint_no_change_watcher", nochange[1], nochange[2], NoGoal, "the checkpoint command: writes a checkpoint")
	b.Logf("10-change automatic checkpoint and checkpoint with the watcher vs find, %d each", reps)
	change10, err := measure.Alternate(ctx, reps,
		measure.Arm{Name: "agent-rewind-hook guard --checkpoint (10 changed files, watcher running)", Setup: changes, Run: hook},
		measure.Arm{Name: "agent-rewind checkpoint (10 changed files, watcher running)", Setup: changes, Run: checkpoint}, find)
	if err != nil {
		return err
	}
	b.Ratio("auto_checkpoint_10_changes_watcher", change10[0], change10[2], AtMost(0.15), "the hook before a tool call")
	b.Ratio("checkpoint_10_changes_watcher", change10[1], change10[2], NoGoal, "the checkpoint command")
	// A rewind knows what it wrote: the checkpoint after one costs what any other watcher-assisted
	// checkpoint does (the rewind leaves the watcher vouching for the checkpoint it restored).
	rewound := func(ctx context.Context) error {
		before := last
		if err := changes(ctx); err != nil {
			return err
		}
		if _, err := measure.Run(agent.Command(ctx, ws, "checkpoint")); err != nil { // set-up: not counted
			return err
		}
		_, err := measure.Run(agent.Command(ctx, ws, "rewind", before))
		last = before
		return err
	}
	b.Logf("checkpoint after a rewind of 10 changed files vs after 10 changed files, watcher running, %d each", reps)
	afterRewind, err := measure.Alternate(ctx, reps,
		measure.Arm{Name: "agent-rewind checkpoint after a rewind of 10 changed files (watcher running)", Setup: rewound, Run: checkpoint},
		measure.Arm{Name: "agent-rewind checkpoint (10 changed files, watcher running)", Setup: changes, Run: checkpoint})
	if err != nil {
		return err
	}
	b.Ratio("checkpoint_after_rewind_vs_watcher", afterRewind[0], afterRewind[1], AtMost(1.5), "the checkpoint command after 10 changed files, watcher running")
	b.Count("watcher_used", hinted, total, "checkpoints", "checkpoints measured above", Exactly(float64(total)),
		"checkpoints that looked only at what the watcher reported; the others walked: "+strings.Join(reasons, "; "))
	if err := rewindWithWatcher(ctx, b, agent, ws, checkpoint, &last, changes, reps); err != nil {
		return err
	}

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

// rewindWithWatcher measures a rewind of 10 changed files with the watcher running (its safety
// checkpoint takes the watcher's hint: no walk) against shadow git undoing the same kind of
// change (git reset --hard && git clean), as the snapshot suite's rewind_10_changes does
// without the watcher.
func rewindWithWatcher(ctx context.Context, b *Bench, agent *Agent, ws string, checkpoint func(context.Context) (measure.Sample, error), last *string, changes func(context.Context) error, reps int) error {
	if _, err := exec.LookPath("git"); err != nil {
		return errors.New("git is not on PATH: the shadow-git baseline needs it (apt-get install git)")
	}
	gitParent, err := b.TempDir("shadow-git-watch")
	if err != nil {
		return err
	}
	if _, err := checkpoint(ctx); err != nil { // the target: the workspace as git commits it
		return err
	}
	target := *last
	git, err := baseline.InitShadowGit(ctx, filepath.Join(gitParent, "git"), ws, snapshotSkip...)
	if err != nil {
		return err
	}
	if _, err := git.Checkpoint(ctx); err != nil {
		return err
	}
	rev, err := git.Head(ctx)
	if err != nil {
		return err
	}
	var hinted, total int64
	var reasons []string
	b.Logf("rewind of 10 changes with the watcher running vs git reset --hard + clean, %d each", reps)
	rewind, err := measure.Alternate(ctx, reps,
		measure.Arm{
			Name:  "agent-rewind rewind (10 changed files, watcher running)",
			Setup: changes,
			Run: func(ctx context.Context) (measure.Sample, error) {
				r, err := measure.Run(agent.Command(ctx, ws, "--json", "rewind", target))
				if err != nil {
					return r.Sample, err
				}
				var out struct {
					SafetyCheckpoint struct{ Walk struct{ Mode, Reason string } } `json:"safetyCheckpoint"`
				}
				if err := json.Unmarshal(r.Stdout, &out); err != nil {
					return r.Sample, fmt.Errorf("rewind --json: %v: %.200q", err, r.Stdout)
				}
				total++
				if w := out.SafetyCheckpoint.Walk; w.Mode == "changed" {
					hinted++
				} else {
					reasons = append(reasons, w.Reason)
				}
				return r.Sample, nil
			},
		},
		measure.Arm{
			Name:  "shadow git: git reset --hard && git clean -fdq",
			Setup: changes,
			Run:   func(ctx context.Context) (measure.Sample, error) { return git.Restore(ctx, rev) },
		})
	if err != nil {
		return err
	}
	*last = target
	b.Ratio("rewind_10_changes_watcher", rewind[0], rewind[1], AtMost(0.8),
		"each side undoes 10 changes; the rewind's safety checkpoint looks only at what the watcher reported")
	b.Count("rewind_watcher_used", hinted, total, "rewinds", "rewinds measured above", Exactly(float64(total)),
		"rewinds whose safety checkpoint looked only at what the watcher reported; the others walked: "+strings.Join(reasons, "; "))
	return nil
}
