package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/tools/bench/baseline"
	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// The guard suite (issue 4): "agent-rewind guard" as an agent hook runs it, one process per
// call, alternated with true(1), the process-start floor:
//
//	non-effect PreToolUse (a Read call): exit 0, nothing printed   goal p50 and p99 <= 5 ms
//	admission of a new explicit key: exit 0                      (reported)
//
// Hook input goes on stdin, as agents pass it.
func init() {
	register(Suite{
		Name:        "guard",
		Description: "agent-rewind guard per process: non-effect hot path and admission, p50/p99, against true(1)",
		Modules:     []string{"barrier", "cli"},
		Run:         runGuard,
	})
}

func runGuard(ctx context.Context, b *Bench) error {
	agent, err := b.Agent(ctx)
	if err != nil {
		return err
	}
	if err := agent.Require(ctx, b, []string{"guard"}); err != nil {
		return err
	}
	ws, err := b.TempDir("workspace")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644); err != nil {
		return err
	}
	nonEffect, err := json.Marshal(map[string]any{
		"session_id": "bench-session", "transcript_path": filepath.Join(ws, "transcript.jsonl"), "cwd": ws,
		"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Read",
		"tool_input": map[string]any{"file_path": filepath.Join(ws, "main.go")}, "tool_use_id": "toolu_bench_read",
	})
	if err != nil {
		return err
	}
	guard := func(ctx context.Context, stdin []byte, wantOut bool) (measure.Sample, error) {
		cmd := agent.Command(ctx, ws, "guard")
		cmd.Stdin = strings.NewReader(string(stdin))
		r, err := measure.Run(cmd)
		if err != nil {
			return r.Sample, err
		}
		if !wantOut && len(r.Stdout) > 0 {
			return r.Sample, fmt.Errorf("guard printed %.100q on stdout for an allowed call: a hook must print nothing", r.Stdout)
		}
		return r.Sample, nil
	}
	key := 0
	arms := []measure.Arm{
		{Name: "true(1)", Run: baseline.True},
		{Name: "agent-rewind guard, non-effect PreToolUse (Read)", Run: func(ctx context.Context) (measure.Sample, error) {
			return guard(ctx, nonEffect, false)
		}},
		{Name: "agent-rewind guard, admission of a new key", Run: func(ctx context.Context) (measure.Sample, error) {
			key++
			in := fmt.Sprintf(`{"key":"bench-admission-%d","payload":{"amount":%d,"currency":"usd"},"description":"bench: admit a new effect"}`, key, key)
			return guard(ctx, []byte(in), true)
		}},
	}
	n := b.Reps(300, 60)
	b.Logf("%d rounds of true / non-effect guard / admission", n)
	ss, err := measure.Alternate(ctx, n, arms...)
	if err != nil {
		return err
	}
	floor, hot, admit := ss[0], ss[1], ss[2]
	p := func(s measure.Series, q float64) float64 { return ms(measure.Percentile(s.Walls(), q)) }
	b.Value("guard_non_effect_p50", p(hot, 50), "ms", "wall per process, process start included", arm(hot), AtMost(5), "")
	b.Value("guard_non_effect_p99", p(hot, 99), "ms", "wall per process, process start included", arm(hot), AtMost(5), "")
	b.Ratio("guard_non_effect_vs_true", hot, floor, NoGoal, "median wall of the hot path over the process-start floor")
	b.Value("guard_admission_p50", p(admit, 50), "ms", "wall per process", arm(admit), NoGoal, "")
	b.Value("guard_admission_p99", p(admit, 99), "ms", "wall per process", arm(admit), NoGoal, "")
	b.Ratio("guard_admission_vs_true", admit, floor, NoGoal, "")
	b.Value("true_p50", p(floor, 50), "ms", "process-start floor", arm(floor), NoGoal, "")
	return nil
}
