package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tools/bench/workspace"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestQuickSelftestArtifact runs the command as "go run ./tools/bench --quick --suite
// harness-selftest" would, and checks the artifact's shape (never its timings).
func TestQuickSelftestArtifact(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bench.json")
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"--quick", "--suite", "harness-selftest", "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Shape, as a consumer without our types sees it.
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "tool", "started", "ended", "args", "quick", "machine", "git", "inputs", "sources", "suites"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("artifact has no %q", k)
		}
	}
	var a Artifact
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("the artifact does not decode into Artifact: %v", err)
	}
	if a.Schema != SchemaVersion || !a.Quick || !a.Ended.After(a.Started) {
		t.Errorf("header: schema %d quick %v started %v ended %v", a.Schema, a.Quick, a.Started, a.Ended)
	}
	m := a.Machine
	if m.Go == "" || m.OS == "" || m.Arch == "" || m.CPUModel == "" || m.CPUs < 1 || m.GOMAXPROCS < 1 {
		t.Errorf("machine %+v", m)
	}
	if a.Git.Commit == "" || (a.Git.Commit != "unknown" && (len(a.Git.Commit) < 40 || a.Git.Dirty == nil)) {
		t.Errorf("git %+v", a.Git)
	}
	if len(a.Suites) != 1 || a.Suites[0].Name != "harness-selftest" || a.Suites[0].Status != StatusOK {
		t.Fatalf("suites %+v", a.Suites)
	}
	checkFigures(t, a.Suites[0])
	names := map[string]bool{}
	for _, f := range a.Suites[0].Figures {
		names[f.Name] = true
	}
	for _, n := range []string{"stat_walk_walkdir_vs_find", "stat_walk_entries", "process_start_p50", "process_start_p99"} {
		if !names[n] {
			t.Errorf("no figure %s", n)
		}
	}
	if len(a.Inputs) != 1 || a.Inputs[0].Kind != "generated" || !hex64.MatchString(a.Inputs[0].SHA256) || a.Inputs[0].Params == nil || !slices.Equal(a.Inputs[0].Suites, []string{"harness-selftest"}) {
		t.Errorf("inputs %+v", a.Inputs)
	}
	var mods []string
	for _, s := range a.Sources {
		mods = append(mods, s.Module)
		if !hex64.MatchString(s.SHA256) || len(s.Files) == 0 {
			t.Errorf("source %s: sha %q, %d files", s.Module, s.SHA256, len(s.Files))
		}
		for _, f := range s.Files {
			if !hex64.MatchString(f.SHA256) || !(strings.HasSuffix(f.Path, ".go") || strings.HasSuffix(f.Path, "go.mod") || strings.HasSuffix(f.Path, "go.sum") || strings.HasPrefix(f.Path, "go.work")) {
				t.Errorf("source file %+v", f)
			}
		}
	}
	if !slices.Equal(mods, []string{"tools", "go.work"}) {
		t.Errorf("source modules %v, want [tools go.work]", mods)
	}
	if !strings.Contains(stdout.String(), "stat_walk_entries") || !strings.Contains(stdout.String(), "artifact: "+out) {
		t.Errorf("summary:\n%s", &stdout)
	}
}

// checkFigures checks what every figure must carry.
func checkFigures(t *testing.T, s SuiteResult) {
	t.Helper()
	if len(s.Figures) == 0 {
		t.Errorf("%s: no figures", s.Name)
	}
	for _, f := range s.Figures {
		if f.Name == "" || f.Unit == "" || math.IsNaN(f.Value) {
			t.Errorf("%s: figure %+v", s.Name, f)
		}
		if (f.Goal == "") != (f.Met == nil) {
			t.Errorf("%s/%s: goal %q with met %v: both or neither", s.Name, f.Name, f.Goal, f.Met)
		}
		if f.Unit == "ratio" && f.Of == "" {
			t.Errorf("%s/%s: a ratio without what it is a ratio of", s.Name, f.Name)
		}
		for _, a := range []*ArmStat{f.A, f.B} {
			if a != nil && (a.Label == "" || a.N < 1 || a.MinMS > a.MedianMS || a.MedianMS > a.MaxMS || a.P25MS > a.P75MS) {
				t.Errorf("%s/%s: arm %+v", s.Name, f.Name, a)
			}
		}
	}
}

func TestUsage(t *testing.T) {
	ctx := context.Background()
	var out, errb bytes.Buffer
	if code := Main(ctx, []string{"--list"}, &out, &errb); code != 0 {
		t.Fatalf("--list: exit %d", code)
	}
	for _, n := range []string{"harness-selftest", "snapshot", "chain", "guard", "analyze", "mcp", "gateway-overhead", "nine-call", "watch"} {
		if !strings.Contains(out.String(), n+" ") {
			t.Errorf("--list lacks %s:\n%s", n, &out)
		}
	}
	for _, args := range [][]string{{"--suite", "nope"}, {"--no-such-flag"}, {"extra"}, {"--files", "3"}, {"gen"}} {
		errb.Reset()
		if code := Main(ctx, args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, &errb)
		}
		if errb.Len() == 0 {
			t.Errorf("%v: no message", args)
		}
	}
}

func TestGenCommand(t *testing.T) {
	ctx := context.Background()
	var results []workspace.Result
	for range 2 {
		dir := filepath.Join(t.TempDir(), "ws")
		var out, errb bytes.Buffer
		if code := Main(ctx, []string{"gen", "--files", "120", "--bytes", "200000", "--seed", "9", "--dir", dir}, &out, &errb); code != 0 {
			t.Fatalf("gen: exit %d: %s", code, &errb)
		}
		var r workspace.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if l, err := workspace.Listing(dir); err != nil || l != r.ListingSHA256 {
			t.Fatalf("listing %s (%v), printed %s", l, err, r.ListingSHA256)
		}
		results = append(results, r)

		out.Reset()
		if code := Main(ctx, []string{"gen", "--changes", "10", "--seed", "3", "--dir", dir}, &out, &errb); code != 0 {
			t.Fatalf("gen --changes: exit %d: %s", code, &errb)
		}
		var cs []workspace.Change
		if err := json.Unmarshal(out.Bytes(), &cs); err != nil || len(cs) != 10 {
			t.Fatalf("changes %s (%v)", &out, err)
		}
	}
	if results[0] != results[1] {
		t.Errorf("the same gen flags gave %+v and %+v", results[0], results[1])
	}
}

func TestWorkModules(t *testing.T) {
	dir := t.TempDir()
	work := "go 1.26\n\n// comment\nuse ./single // trailing\nuse (\n\t./cli\n\t\"./quoted\"\n\t./nested/x/\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte(work), 0o644); err != nil {
		t.Fatal(err)
	}
	mods, err := workModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"single", "cli", "quoted", "nested/x"}; !slices.Equal(mods, want) {
		t.Errorf("modules %v, want %v", mods, want)
	}
	sub := filepath.Join(dir, "a", "b")
	os.MkdirAll(sub, 0o755)
	if root, err := findRoot(sub); err != nil || root != dir {
		t.Errorf("findRoot = %q, %v", root, err)
	}
}

func TestGoals(t *testing.T) {
	for _, c := range []struct {
		g    Goal
		v    float64
		text string
		met  bool
	}{
		{AtMost(0.2), 0.12, "<= 0.2", true}, {AtMost(0.2), 0.21, "<= 0.2", false},
		{AtLeast(150), 150, ">= 150", true}, {Exactly(3), 3, "== 3", true}, {Exactly(0), 1, "== 0", false},
		{AtMost(1), math.NaN(), "<= 1", false},
	} {
		f := Figure{Value: c.v}
		c.g.apply(&f)
		if f.Goal != c.text || f.Met == nil || *f.Met != c.met {
			t.Errorf("%v on %v: %q %v", c.g, c.v, f.Goal, f.Met)
		}
	}
	f := Figure{Value: 1}
	NoGoal.apply(&f)
	if f.Goal != "" || f.Met != nil {
		t.Errorf("NoGoal set %q %v", f.Goal, f.Met)
	}
	for in, want := range map[float64]float64{0.123456: 0.1235, 123456: 123500, 0: 0, -0.0012345: -0.001235} {
		if got := roundSig(in, 4); got != want {
			t.Errorf("roundSig(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestNineCallPricing(t *testing.T) {
	raw, err := os.ReadFile("testdata/nine-call/prices.json")
	if err != nil {
		t.Fatal(err)
	}
	var pr prices
	if err := json.Unmarshal(raw, &pr); err != nil {
		t.Fatal(err)
	}
	msg := []byte(`{"model":"claude-sonnet-5-5","usage":{"input_tokens":1000000,"output_tokens":1000000,"cache_creation_input_tokens":2000000,"cache_read_input_tokens":1000000,
		"cache_creation":{"ephemeral_5m_input_tokens":1000000,"ephemeral_1h_input_tokens":1000000}}}`)
	got, err := pr.cost(msg)
	m := pr.Models["claude-sonnet-5-5"]
	want := m.Input + m.Output + m.CacheWrite5m + m.CacheWrite1h + m.CacheRead
	if err != nil || math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %v (%v), want %v", got, err, want)
	}
	if _, err := pr.cost([]byte(`{"model":"gpt-unknown","usage":{}}`)); err == nil {
		t.Error("an unpriced model was priced")
	}
	// Every response in the corpus can be priced.
	files, _ := filepath.Glob("testdata/nine-call/*/*.response.json")
	if len(files) != 18 {
		t.Fatalf("%d response files, want 18", len(files))
	}
	for _, p := range files {
		b, _ := os.ReadFile(p)
		if c, err := pr.cost(b); err != nil || c <= 0 {
			t.Errorf("%s: cost %v, %v", p, c, err)
		}
	}
}

// TestSuitesAgainstFakeAgent runs every agent-rewind suite, at a tenth of its --quick size,
// against a stand-in binary (fakeagent_test.go), so that their measuring code is exercised
// before the modules they measure exist. It checks that each suite completes and reports
// well-formed figures, and the figures whose value the harness itself decides (replay counts,
// exact rewinds, tool counts).
func TestSuitesAgainstFakeAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the suites take a while")
	}
	for _, tool := range []string{"git", "find", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("REWIND_CI") == "1" {
				t.Fatalf("%s is not installed (the suites' baselines need it)", tool)
			}
			t.Skipf("%s is not installed: the suites' baselines need it", tool)
		}
	}
	t.Setenv("BENCH_FAKE_AGENT", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	r := &run{
		root: root, tmp: tmp, quick: true, tiny: true, log: testLog{t},
		shape:   workspace.Shape{Files: 150, Bytes: 150 * 3000, Seed: 1},
		modules: []string{"analyze", "barrier", "cacheplan", "cli", "gateway", "hashchain", "mcpserver", "snapshot", "tape", "tools"},
		used:    map[string]bool{}, spaces: map[workspace.Shape]generated{},
	}
	r.agent = &Agent{Path: exe, StateHome: filepath.Join(tmp, "state"), has: map[string]bool{}}
	r.agentOnce.Do(func() {})

	build, appendDurable := chainBuild, chainAppendDurable
	defer func() { chainBuild, chainAppendDurable = build, appendDurable }()
	line := []byte(`{"seq":0,"kind":"fake"}` + "\n")
	chainBuild = func(path string, n int) error { return os.WriteFile(path, bytes.Repeat(line, n), 0o644) }
	chainAppendDurable = func(path string, n int) error { return fsyncLines(path, line, n) }

	want := map[string]map[string]bool{ // figures whose met the harness decides, not the fake's speed
		"snapshot":  {"rewind_exact": true},
		"nine-call": {"nine_call_replayed": true, "nine_call_unique_replayed": true, "nine_call_unique_simulated_savings": true},
		"mcp":       {"mcp_tools_lean": true, "mcp_tools_recovery": true, "mcp_tools_analytics": true, "mcp_tools_all": true},
	}
	for _, s := range registry {
		if s.Name == "harness-selftest" || s.Name == "gateway-team" {
			continue // gateway-team needs the real binary and PostgreSQL: `go run ./tools/bench --suite gateway-team`
		}
		t.Run(s.Name, func(t *testing.T) {
			res := runSuite(context.Background(), r, s)
			if s.Name == "watch" && res.Status == StatusSkipped {
				t.Skipf("the fake agent has no change watcher: %s", res.Reason) // the real one: cli's tests and a real run
			}
			if res.Status != StatusOK {
				t.Fatalf("status %s: %s", res.Status, res.Reason)
			}
			checkFigures(t, res)
			for _, f := range res.Figures {
				t.Logf("%s = %s (goal %q, of %q) %s", f.Name, valueText(f), f.Goal, f.Of, f.Note)
				if mustMeet, ok := want[s.Name][f.Name]; ok && (f.Met == nil || *f.Met != mustMeet) {
					t.Errorf("%s = %v (goal %s): met %v", f.Name, f.Value, f.Goal, f.Met)
				}
				delete(want[s.Name], f.Name)
			}
			for n := range want[s.Name] {
				t.Errorf("no figure %s", n)
			}
			if !slices.Contains(res.Modules, "cli") {
				t.Errorf("modules %v: the binary's modules are not recorded", res.Modules)
			}
		})
	}
}

// testLog sends the harness's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
