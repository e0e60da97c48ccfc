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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/baseline"
	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// The guard suite (issues 4 and 17): "agent-rewind guard" as an agent hook runs it, one process
// per call, alternated with true(1), the process-start floor:
//
//	non-effect PreToolUse (Bash "go test ./... | tail"): exit 0, nothing printed   goal p50 and p99 <= 5 ms
//	  the same through agent-rewind-hook, served by the guard server             (reported)
//	non-effect PostToolUse (the same call, after it ran): exit 0, nothing printed (reported)
//	admission of a new explicit key: exit 0                                      (reported)
//	the hook path, agent-rewind-hook guard --checkpoint before a Bash call in an unchanged
//	  workspace (the decision plus the automatic checkpoint, which reuses the position), a
//	  new tool call id each time, as agents send them:
//	  served by the warm guard server, with the change watcher running, the run's generated
//	    workspace (--quick: 5,000 files), against a minimal Go program's whole process  goal <= 1.5x
//	  the same with REWIND_HOOK_SERVER=off: the client runs agent-rewind's whole guard (reported)
//	  the same through "agent-rewind guard --checkpoint", for comparison       (reported)
//	  without a watcher (REWIND_WATCH=off: a stat walk), 200 files, served by a server of that
//	    environment (a state folder of its own)                                   (reported)
//	  after one file of a 200-file workspace changed (most of an editing agent's calls: each
//	    writes a checkpoint, records it on the chain and notes the call), served, watcher
//	    running, in a workspace of its own                                        (reported)
//
// The hook path measures the fixed cost of one hook process as agents meet it: the plugin's
// and docs/agents.md's hooks run agent-rewind-hook, a thin client of the per-user guard server
// (agent-rewind hook-server), which the first calls start and which is warm when measured; the
// watcher runs (the first checkpoint starts it), so the checkpoint asks it and looks at nothing
// else; the no-watcher arm is the stat walk of a small tree (the snapshot suite walks a large
// one). The servers are stopped at the end.
//
// The non-effect calls are Bash calls because the hooks are (integrations/claude-code matches
// Bash and MCP tools only); they go through the shell splitter and every built-in rule. They
// run in a workspace of their own, which must still have no store at the end ("agent-rewind
// store" fails): the hot path creates nothing. Hook input goes on stdin, as agents pass it.
func init() {
	register(Suite{
		Name:        "guard",
		Description: "agent-rewind guard and agent-rewind-hook per process: non-effect hot path, admission and the hook path, against true(1) and a minimal Go program",
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
	hotWS, err := b.TempDir("hot-workspace")
	if err != nil {
		return err
	}
	// Two workspaces of 200 small Go files in 20 folders: one stays unchanged, the other changes
	// before each of its calls (one file rewritten).
	autoWS, err := smallTree(b, "auto-workspace")
	if err != nil {
		return err
	}
	editWS, err := smallTree(b, "edit-workspace")
	if err != nil {
		return err
	}
	edits := 0
	edit := func() error {
		edits++
		return os.WriteFile(filepath.Join(editWS, fmt.Sprintf("pkg%02d", edits%20), fmt.Sprintf("f%03d.go", edits%20*10)), []byte(fmt.Sprintf("// edit %d\n", edits)), 0o644)
	}
	// The realistic workspace, with its watcher as agents meet it: the first checkpoint (here
	// the command's, outside the measurement) walks; the hook calls then start the watcher, in
	// the guard server that serves them (watch.InProcess), and the warm-up calls take its
	// first token. A watcher started by the command line would be a process of its own, which
	// the hook calls ask over its socket.
	watchedWS, watchedRes, err := b.FreshWorkspace(ctx, b.Shape())
	if err != nil {
		return err
	}
	defer measure.Run(agent.Command(context.Background(), watchedWS, "watch", "stop"))
	if r, err := measure.Run(agent.With("REWIND_WATCH=off").Command(ctx, watchedWS, "checkpoint")); err != nil {
		return fmt.Errorf("checkpoint of the watched workspace: %v: %s", err, r.Stderr)
	}
	hookAgent, err := hookBinary(ctx, b, agent)
	if err != nil {
		return err
	}
	// The no-watcher arm's environment differs from the hook path's in REWIND_WATCH, so it has a
	// state folder, and a guard server, of its own; the fallback arm never uses a server.
	noWatch := hookAgent.With("REWIND_WATCH=off")
	if noWatch.StateHome, err = b.TempDir("no-watch-state"); err != nil {
		return err
	}
	fallBack := hookAgent.With("REWIND_HOOK_SERVER=off")
	// The guard servers are agent-rewind's to show and stop, for each state folder.
	server := func(a *Agent) *Agent {
		s := a.With()
		s.Path = agent.Path
		return s
	}
	for _, a := range []*Agent{hookAgent, noWatch} {
		defer measure.Run(server(a).Command(context.Background(), "/", "hook-server", "stop"))
	}
	goDir, err := b.TempDir("minimal-go")
	if err != nil {
		return err
	}
	minimal, err := baseline.BuildMinimalGo(ctx, goDir)
	if err != nil {
		return err
	}
	servedDir, err := b.TempDir("minimal-served")
	if err != nil {
		return err
	}
	served, err := baseline.StartMinimalServed(ctx, servedDir)
	if err != nil {
		return err
	}
	defer served.Stop()
	hook := func(event string) ([]byte, error) {
		return json.Marshal(map[string]any{
			"session_id": "bench-session", "transcript_path": filepath.Join(hotWS, "transcript.jsonl"), "cwd": hotWS,
			"permission_mode": "default", "hook_event_name": event, "tool_name": "Bash",
			"tool_input":  map[string]any{"command": "go test ./... 2>&1 | tail -20", "description": "Run the tests"},
			"tool_use_id": "toolu_bench_test",
		})
	}
	pre, err := hook("PreToolUse")
	if err != nil {
		return err
	}
	post, err := hook("PostToolUse")
	if err != nil {
		return err
	}
	guardAs := func(ctx context.Context, a *Agent, dir string, stdin []byte, silent bool, args ...string) (measure.Sample, error) {
		cmd := a.Command(ctx, dir, append([]string{"guard"}, args...)...)
		cmd.Stdin = strings.NewReader(string(stdin))
		r, err := measure.Run(cmd)
		if err != nil {
			return r.Sample, err
		}
		if silent && len(r.Stdout)+len(r.Stderr) > 0 {
			return r.Sample, fmt.Errorf("guard printed %.100q / %.100q for a call that is not an effect: a hook must print nothing", r.Stdout, r.Stderr)
		}
		return r.Sample, nil
	}
	guard := func(ctx context.Context, dir string, stdin []byte, silent bool, args ...string) (measure.Sample, error) {
		return guardAs(ctx, agent, dir, stdin, silent, args...)
	}
	// Each call a new tool call id, as an agent's calls have: each is noted against the position.
	calls := 0
	hookCall := func(a *Agent, dir string) func(context.Context) (measure.Sample, error) {
		return func(ctx context.Context) (measure.Sample, error) {
			calls++
			in := bytes.ReplaceAll(pre, []byte(hotWS), []byte(dir))
			in = bytes.ReplaceAll(in, []byte("toolu_bench_test"), []byte(fmt.Sprintf("toolu_bench_%06d", calls)))
			return guardAs(ctx, a, dir, in, true, "--checkpoint")
		}
	}
	// The first automatic checkpoint of each workspace, outside the measurement: later calls
	// find it unchanged. The first calls start the guard servers: wait for them, then warm them.
	for _, w := range []struct {
		a   *Agent
		dir string
	}{{noWatch, autoWS}, {hookAgent, watchedWS}, {hookAgent, editWS}} {
		if _, err := hookCall(w.a, w.dir)(ctx); err != nil {
			return fmt.Errorf("first automatic checkpoint of %s: %w", w.dir, err)
		}
		if hookAgent.Path == agent.Path {
			continue // no hook binary: no server
		}
		if _, err := waitServed(ctx, server(w.a)); err != nil {
			return err
		}
		for range 5 {
			if _, err := hookCall(w.a, w.dir)(ctx); err != nil {
				return fmt.Errorf("warm-up call in %s: %w", w.dir, err)
			}
		}
	}
	served0, _ := waitServed(ctx, server(hookAgent))
	key := 0
	arms := []measure.Arm{
		{Name: "true(1)", Run: baseline.True},
		{Name: "agent-rewind guard, non-effect PreToolUse (Bash)", Run: func(ctx context.Context) (measure.Sample, error) {
			return guard(ctx, hotWS, pre, true)
		}},
		{Name: "agent-rewind-hook guard, non-effect PreToolUse (Bash)", Run: func(ctx context.Context) (measure.Sample, error) {
			return guardAs(ctx, hookAgent, hotWS, pre, true)
		}},
		{Name: "agent-rewind guard, non-effect PostToolUse (Bash)", Run: func(ctx context.Context) (measure.Sample, error) {
			return guard(ctx, hotWS, post, true)
		}},
		{Name: "agent-rewind guard, admission of a new key", Run: func(ctx context.Context) (measure.Sample, error) {
			key++
			in := fmt.Sprintf(`{"key":"bench-admission-%d","payload":{"amount":%d,"currency":"usd"},"description":"bench: admit a new effect"}`, key, key)
			return guard(ctx, ws, []byte(in), false)
		}},
		{Name: "minimal Go program", Run: minimal.Run},
		{Name: fmt.Sprintf("agent-rewind-hook guard --checkpoint, PreToolUse (Bash), unchanged workspace of %d files, watcher running", watchedRes.Shape.Files), Run: hookCall(hookAgent, watchedWS)},
		{Name: "agent-rewind-hook guard --checkpoint, PreToolUse (Bash), unchanged workspace of 200 files, no watcher", Run: hookCall(noWatch, autoWS)},
		{Name: fmt.Sprintf("agent-rewind-hook guard --checkpoint with REWIND_HOOK_SERVER=off, unchanged workspace of %d files, watcher running", watchedRes.Shape.Files), Run: hookCall(fallBack, watchedWS)},
		{Name: fmt.Sprintf("agent-rewind guard --checkpoint, PreToolUse (Bash), unchanged workspace of %d files, watcher running", watchedRes.Shape.Files), Run: hookCall(agent, watchedWS)},
		{Name: "agent-rewind-hook guard --checkpoint, PreToolUse (Bash), one file of 200 changed before the call, watcher running", Run: func(ctx context.Context) (measure.Sample, error) {
			if err := edit(); err != nil { // before the process, outside its sample
				return measure.Sample{}, err
			}
			return hookCall(hookAgent, editWS)(ctx)
		}},
		{Name: "minimal Go client answered over a unix socket by a minimal Go server", Run: func(ctx context.Context) (measure.Sample, error) {
			return served.Run(ctx, pre)
		}},
	}
	n := b.Reps(300, 60)
	b.Logf("%d rounds of true / non-effect PreToolUse (agent-rewind, agent-rewind-hook) / non-effect PostToolUse / admission / minimal Go / hook path with the watcher / hook path without / hook path with the server off / agent-rewind guard --checkpoint with the watcher / hook path after one changed file / minimal served client", n)
	ss, err := measure.Alternate(ctx, n, arms...)
	if err != nil {
		return err
	}
	if s, err := agent.Store(ctx, hotWS); err == nil {
		return fmt.Errorf("the non-effect calls created the store %s for %s: the hot path must create nothing", s, hotWS)
	}
	if !agent.Has(ctx, "watch", "status") {
		b.Logf("this agent-rewind has no change watcher: the hook path ran without one")
	} else if r, err := measure.Run(agent.Command(ctx, watchedWS, "--json", "watch", "status")); err != nil || !bytes.Contains(r.Stdout, []byte(`"running": true`)) {
		return fmt.Errorf("the watched workspace's watcher is not running after the hook calls (%v): %.200q", err, r.Stdout)
	}
	if hookAgent.Path != agent.Path {
		// Every hook-path call and every non-effect hook call must have been served: a server
		// that fell back would measure the fallback.
		if served, err := waitServed(ctx, server(hookAgent)); err != nil || served-served0 < int64(3*n) {
			return fmt.Errorf("the guard server served %d of the %d measured hook calls (%v): the hook path was not measured served", served-served0, 3*n, err)
		}
	}
	floor, hot, hookHot, after, admit, goFloor, hookPath, hookNoWatch, hookOff, guardPath, hookEdit, servedFloor := ss[0], ss[1], ss[2], ss[3], ss[4], ss[5], ss[6], ss[7], ss[8], ss[9], ss[10], ss[11]
	p := func(s measure.Series, q float64) float64 { return ms(measure.Percentile(s.Walls(), q)) }
	b.Value("guard_non_effect_p50", p(hot, 50), "ms", "wall per process, process start included", arm(hot), AtMost(5), "")
	b.Value("guard_non_effect_p99", p(hot, 99), "ms", "wall per process, process start included", arm(hot), AtMost(5), "")
	b.Ratio("guard_non_effect_vs_true", hot, floor, NoGoal, "median wall of the hot path over the process-start floor")
	b.Value("hook_non_effect_p50", p(hookHot, 50), "ms", "wall per process: agent-rewind-hook, process start included", arm(hookHot), NoGoal, "")
	b.Ratio("hook_non_effect_vs_minimal_go", hookHot, goFloor, NoGoal, "agent-rewind-hook's non-effect hot path over a minimal Go process, same run")
	b.Value("guard_post_non_effect_p50", p(after, 50), "ms", "wall per process", arm(after), NoGoal, "the hook after every Bash and MCP call: one failed open")
	b.Value("guard_post_non_effect_p99", p(after, 99), "ms", "wall per process", arm(after), NoGoal, "")
	b.Value("guard_admission_p50", p(admit, 50), "ms", "wall per process", arm(admit), NoGoal, "")
	b.Value("guard_admission_p99", p(admit, 99), "ms", "wall per process", arm(admit), NoGoal, "")
	b.Ratio("guard_admission_vs_true", admit, floor, NoGoal, "")
	b.Value("true_p50", p(floor, 50), "ms", "process-start floor", arm(floor), NoGoal, "")
	b.Value("minimal_go_p50", p(goFloor, 50), "ms", "a Go program that does nothing, whole process", arm(goFloor), NoGoal, "")
	b.Value("hook_path_p50", p(hookPath, 50), "ms", fmt.Sprintf("wall per process of agent-rewind-hook: guard decision plus automatic checkpoint, unchanged workspace of %d files, watcher running", watchedRes.Shape.Files), arm(hookPath), NoGoal, "")
	b.Ratio("served_floor_vs_minimal_go", servedFloor, goFloor, NoGoal, "a minimal Go client answered over a unix socket by a minimal Go server, over a minimal Go process, same run: the least any served hook costs")
	b.Ratio("hook_path_vs_served_floor", hookPath, servedFloor, NoGoal, "the hook path over that floor, same run: what agent-rewind's client and server add to it")
	b.Ratio("hook_path_vs_minimal_go", hookPath, goFloor, AtMost(1.5), fmt.Sprintf("agent-rewind-hook guard --checkpoint on an unchanged workspace of %d files with the watcher running, over a minimal Go process, same run", watchedRes.Shape.Files))
	b.Value("guard_checkpoint_p50", p(guardPath, 50), "ms", "wall per process of agent-rewind guard --checkpoint, the same calls as hook_path", arm(guardPath), NoGoal, "")
	b.Ratio("guard_checkpoint_vs_minimal_go", guardPath, goFloor, NoGoal, "agent-rewind guard --checkpoint (the whole binary), the same calls as hook_path, over a minimal Go process, same run")
	b.Ratio("hook_path_vs_guard_checkpoint", hookPath, guardPath, NoGoal, "agent-rewind-hook over agent-rewind guard, the same calls, same run")
	b.Value("hook_path_server_off_p50", p(hookOff, 50), "ms", "wall per process: agent-rewind-hook with REWIND_HOOK_SERVER=off (the client execs agent-rewind's whole guard), the same calls as hook_path", arm(hookOff), NoGoal, "")
	b.Ratio("hook_path_server_off_vs_minimal_go", hookOff, goFloor, NoGoal, "the hook path with REWIND_HOOK_SERVER=off, over a minimal Go process, same run: the fallback when no server answers")
	b.Value("hook_path_no_watcher_p50", p(hookNoWatch, 50), "ms", "wall per process: guard decision plus automatic checkpoint by a stat walk, unchanged workspace of 200 files", arm(hookNoWatch), NoGoal, "")
	b.Ratio("hook_path_no_watcher_vs_minimal_go", hookNoWatch, goFloor, NoGoal, "agent-rewind-hook guard --checkpoint with REWIND_WATCH=off on an unchanged workspace of 200 files, over a minimal Go process, same run")
	b.Value("hook_path_changed_p50", p(hookEdit, 50), "ms", "wall per process of agent-rewind-hook: guard decision plus an automatic checkpoint of one changed file (200-file workspace, watcher running): written, recorded on the chain, the call noted, each durably", arm(hookEdit), NoGoal, "")
	b.Ratio("hook_path_changed_vs_minimal_go", hookEdit, goFloor, NoGoal, "agent-rewind-hook guard --checkpoint after one changed file, over a minimal Go process, same run")
	if hookAgent.Path == agent.Path {
		return nil
	}
	syncs, err := syncsOnPath(ctx, server(hookAgent), func(ctx context.Context) error {
		if err := edit(); err != nil {
			return err
		}
		_, err := hookCall(hookAgent, editWS)(ctx)
		return err
	})
	if errors.Is(err, errNoStrace) {
		b.Logf("fsyncs per changed call not counted: %v", err)
		return nil
	} else if err != nil {
		return err
	}
	b.Value("hook_path_changed_fsyncs", syncs, "syncs", "fsync, fdatasync and syncfs calls the guard server starts before it answers one changed call (strace -f -p), median of 5: what the agent waits on; the group commit's (calls log, chain sidecar, anchor) not counted", nil, AtMost(3), "")
	return nil
}

// deferredSync reports whether a traced sync call is one the guard server's group commit makes
// after the answer by design (docs/promises.md): the calls log, the chain's Merkle sidecar and
// the anchor of its head.
func deferredSync(call string) bool {
	return strings.Contains(call, "/calls.jsonl>") || strings.Contains(call, "/chain.tree>") || strings.Contains(call, "/anchors/")
}

// errNoStrace: strace is missing or may not attach here.
var errNoStrace = errors.New("strace is not installed or may not attach (ptrace)")

// syncsOnPath attaches strace to the guard server of a's state folder and counts the sync calls
// it makes while call runs, five times, and returns the median. strace is stopped as soon as the
// call returns, so the group commit that follows it is not counted.
func syncsOnPath(ctx context.Context, a *Agent, call func(context.Context) error) (float64, error) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		return 0, errNoStrace
	}
	r, err := measure.Run(a.Command(ctx, "/", "--json", "hook-server", "status"))
	var st struct {
		PID int `json:"pid"`
	}
	if err != nil || json.Unmarshal(r.Stdout, &st) != nil || st.PID == 0 {
		return 0, fmt.Errorf("the guard server's pid: %v %.200q", err, r.Stdout)
	}
	dir, err := os.MkdirTemp("", "bench-strace-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	var counts []int
	for i := range 5 {
		out := filepath.Join(dir, fmt.Sprint(i))
		cmd := exec.CommandContext(ctx, strace, "-f", "-qq", "-y", "-ttt", "-p", strconv.Itoa(st.PID), "-e", "trace=fsync,fdatasync,syncfs", "-o", out)
		if err := cmd.Start(); err != nil {
			return 0, errNoStrace
		}
		attached := false
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", st.PID)); err == nil && !bytes.Contains(b, []byte("TracerPid:\t0\n")) {
				attached = true
				break
			}
		}
		time.Sleep(150 * time.Millisecond) // the last call's group commit (100 ms) is over
		err := errNoStrace
		var answered time.Time
		if attached {
			err = call(ctx)
			answered = time.Now()
		}
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if err != nil {
			return 0, err
		}
		b, _ := os.ReadFile(out)
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			// "<pid> <unix seconds.micros> fsync(7</path>) = 0": a sync that started before the
			// answer, of a file the agent waits for (not the group commit's, which a slow call
			// on a loaded machine lets start before its answer).
			f := strings.Fields(line)
			if len(f) < 3 || !strings.Contains(f[2], "sync(") || deferredSync(f[2]) {
				continue
			}
			if t, err := strconv.ParseFloat(f[1], 64); err == nil && t < float64(answered.UnixMicro())/1e6 {
				n++
			}
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	return float64(counts[len(counts)/2]), nil
}

// smallTree makes a temporary workspace named name of 200 small Go files in 20 folders.
func smallTree(b *Bench, name string) (string, error) {
	root, err := b.TempDir(name)
	if err != nil {
		return "", err
	}
	for i := range 200 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%02d", i/10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte(strings.Repeat("// bench\n", 40+i)), 0o644); err != nil {
			return "", err
		}
	}
	return root, nil
}

// waitServed waits for the guard server of a's state folder to answer (a is agent-rewind) and
// returns how many calls it has served.
func waitServed(ctx context.Context, a *Agent) (int64, error) {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r, err := measure.Run(a.Command(ctx, "/", "--json", "hook-server", "status"))
		var st struct {
			Running bool  `json:"running"`
			Served  int64 `json:"served"`
		}
		if err == nil && json.Unmarshal(r.Stdout, &st) == nil && st.Running {
			return st.Served, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no guard server answers for %s after the first hook calls (%v): %.200q", a.StateHome, err, r.Stderr)
		}
	}
}

// hookBinary returns agent-rewind-hook as the run's agent: the one beside the agent's binary
// (releases and npm put them together), else built from this checkout beside the agent this run
// built, as the release builds it. A binary given with --agent that has none beside it, or the
// tests' stand-in, is measured itself in the hook arms (said in the log).
func hookBinary(ctx context.Context, b *Bench, agent *Agent) (*Agent, error) {
	path := filepath.Join(filepath.Dir(agent.Path), "agent-rewind-hook")
	if _, err := os.Stat(path); err != nil {
		if b.run.agentPath != "" || agent.Path != filepath.Join(b.run.tmp, "bin", "agent-rewind") {
			b.Logf("no agent-rewind-hook beside %s: the hook arms run that binary's guard", agent.Path)
			return agent, nil
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", path, "./cli/cmd/agent-rewind-hook")
		cmd.Dir = b.run.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cli/cmd/agent-rewind-hook: %v: %s", err, bytes.TrimSpace(out))
		}
	}
	h := agent.With()
	h.Path = path
	return h, nil
}
