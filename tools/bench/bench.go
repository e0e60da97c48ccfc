package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/measure"
	"github.com/agent-rewind/rewind/tools/bench/workspace"
)

// run is the state shared by every suite of one bench run.
type run struct {
	root      string // repository root
	tmp       string // this run's scratch directory, removed at the end
	quick     bool
	agentPath string          // --agent: an agent-rewind binary to measure instead of building one
	tiny      bool            // tests only: every Reps and size a tenth of its quick value (at least 2)
	shape     workspace.Shape // the snapshot workspace (Full or Quick, or --files/--seed/--bytes)
	modules   []string        // go.work's modules
	log       io.Writer       // progress (stderr)

	mu        sync.Mutex
	inputs    []Input
	used      map[string]bool // source modules to hash
	spaces    map[workspace.Shape]generated
	agent     *Agent
	agentErr  error
	agentOnce sync.Once
}

type generated struct {
	dir string
	res workspace.Result
}

// Bench is what a suite's Run receives: the run's settings and the means to report figures,
// register inputs, and reach shared fixtures (generated workspaces, the agent-rewind binary).
type Bench struct {
	Quick bool
	run   *run
	res   *SuiteResult
}

// Reps returns a repetition count or a size: full normally, quick with --quick.
func (b *Bench) Reps(full, quick int) int {
	switch {
	case b.run.tiny:
		return max(2, quick/10)
	case b.Quick:
		return quick
	}
	return full
}

// Logf writes a progress line to stderr, prefixed with the suite's name.
func (b *Bench) Logf(format string, args ...any) {
	fmt.Fprintf(b.run.log, "bench: %s: %s\n", b.res.Name, fmt.Sprintf(format, args...))
}

// Skip returns the error that marks the suite skipped for the given reason.
func (b *Bench) Skip(format string, args ...any) error {
	return &skipError{fmt.Sprintf(format, args...)}
}

// Root returns the repository root.
func (b *Bench) Root() string { return b.run.root }

// Shape returns the snapshot workspace shape of this run.
func (b *Bench) Shape() workspace.Shape { return b.run.shape }

// TempDir returns a new empty directory inside the run's scratch directory.
func (b *Bench) TempDir(name string) (string, error) {
	return os.MkdirTemp(b.run.tmp, b.res.Name+"-"+name+"-")
}

// Report adds f to the suite's figures.
func (b *Bench) Report(f Figure) { b.res.Figures = append(b.res.Figures, f) }

// Ratio reports median(a)/median(den) as a figure named name, with both arms' statistics.
func (b *Bench) Ratio(name string, a, den measure.Series, g Goal, note string) Figure {
	f := Figure{Name: name, Value: measure.Ratio(a, den), Unit: "ratio", Of: den.Name, A: arm(a), B: arm(den), Note: note}
	return b.finish(f, g)
}

// Added reports how much the q-th percentile (0–100) of a's wall times exceeds den's, in
// milliseconds: the latency a layer adds over calling its target directly.
func (b *Bench) Added(name string, a, den measure.Series, q float64, g Goal, note string) Figure {
	d := measure.Percentile(a.Walls(), q) - measure.Percentile(den.Walls(), q)
	f := Figure{Name: name, Value: float64(d) / float64(time.Millisecond), Unit: "ms", A: arm(a), B: arm(den),
		Of: fmt.Sprintf("p%g of %s", q, den.Name), Note: note}
	return b.finish(f, g)
}

// Value reports a measured quantity (a rate, a size, a latency percentile) with its unit and,
// where there is one, the arm it was measured from and the reference it is compared with.
func (b *Bench) Value(name string, v float64, unit, of string, a *ArmStat, g Goal, note string) Figure {
	return b.finish(Figure{Name: name, Value: v, Unit: unit, Of: of, A: a, Note: note}, g)
}

// Count reports "n of total" (for example 3 calls replayed of 9 sent).
func (b *Bench) Count(name string, n, total int64, unit, of string, g Goal, note string) Figure {
	d := float64(total)
	return b.finish(Figure{Name: name, Value: float64(n), Unit: unit, Denominator: &d, Of: of, Note: note}, g)
}

// UsesModules records that the figures come from the named modules' code (hashed into the
// artifact's sources).
func (b *Bench) UsesModules(mods ...string) {
	b.run.mu.Lock()
	defer b.run.mu.Unlock()
	for _, m := range mods {
		b.run.used[m] = true
		if !slices.Contains(b.res.Modules, m) {
			b.res.Modules = append(b.res.Modules, m)
		}
	}
	slices.Sort(b.res.Modules)
}

// InputFile registers a corpus file under tools/bench/testdata/ (rel is relative to it) and
// returns its absolute path.
func (b *Bench) InputFile(rel string) (string, error) {
	p := filepath.Join(b.run.root, "tools", "bench", "testdata", filepath.FromSlash(rel))
	sum, n, err := fileSHA256(p)
	if err != nil {
		return "", fmt.Errorf("input %s: %w", rel, err)
	}
	repoRel, _ := filepath.Rel(b.run.root, p)
	b.addInput(Input{Name: rel, Kind: "file", Path: filepath.ToSlash(repoRel), SHA256: sum, Bytes: n})
	return p, nil
}

// GeneratedInput registers a generated corpus: its generator, parameters, the hash that
// identifies what was generated, and its size.
func (b *Bench) GeneratedInput(name, generator string, params any, sha string, bytes int64) {
	b.addInput(Input{Name: name, Kind: "generated", Generator: generator, Params: params, SHA256: sha, Bytes: bytes})
}

func (b *Bench) addInput(in Input) {
	b.run.mu.Lock()
	defer b.run.mu.Unlock()
	for i := range b.run.inputs {
		if b.run.inputs[i].Name == in.Name && b.run.inputs[i].SHA256 == in.SHA256 {
			if !slices.Contains(b.run.inputs[i].Suites, b.res.Name) {
				b.run.inputs[i].Suites = append(b.run.inputs[i].Suites, b.res.Name)
			}
			return
		}
	}
	in.Suites = []string{b.res.Name}
	b.run.inputs = append(b.run.inputs, in)
}

// Workspace returns a generated tree of shape s, generating it on first use in this run and
// registering it as an input. Suites that modify it must leave it as they found it or ask for a
// fresh one with FreshWorkspace.
func (b *Bench) Workspace(ctx context.Context, s workspace.Shape) (string, workspace.Result, error) {
	b.run.mu.Lock()
	g, ok := b.run.spaces[s]
	b.run.mu.Unlock()
	if !ok {
		dir, res, err := b.FreshWorkspace(ctx, s)
		if err != nil {
			return "", res, err
		}
		g = generated{dir, res}
		b.run.mu.Lock()
		b.run.spaces[s] = g
		b.run.mu.Unlock()
		return dir, res, nil
	}
	b.registerWorkspace(g.res)
	return g.dir, g.res, nil
}

// FreshWorkspace generates a new tree of shape s that only this caller uses.
func (b *Bench) FreshWorkspace(ctx context.Context, s workspace.Shape) (string, workspace.Result, error) {
	parent, err := b.TempDir("ws")
	if err != nil {
		return "", workspace.Result{}, err
	}
	dir := filepath.Join(parent, "workspace")
	start := time.Now()
	res, err := workspace.Generate(ctx, dir, s)
	if err != nil {
		return "", res, err
	}
	b.Logf("generated %d files, %.1f MB in %.1fs (seed %d) at %s", res.Regular+res.Symlinks, float64(res.Bytes)/1e6, time.Since(start).Seconds(), s.Seed, dir)
	b.registerWorkspace(res)
	return dir, res, nil
}

func (b *Bench) registerWorkspace(res workspace.Result) {
	b.GeneratedInput(fmt.Sprintf("workspace files=%d bytes=%d seed=%d", res.Shape.Files, res.Shape.Bytes, res.Shape.Seed),
		"tools/bench/workspace.Generate", res, res.ListingSHA256, res.Bytes)
}

// finish judges f against g on the exact value, then rounds the value for the artifact and
// reports it.
func (b *Bench) finish(f Figure, g Goal) Figure {
	g.apply(&f)
	if math.IsNaN(f.Value) || math.IsInf(f.Value, 0) {
		// JSON cannot carry them: report 0, say so, and never count it as met.
		f.Note = strings.TrimSpace(f.Note + " (value was not a number: nothing measured)")
		f.Value = 0
	}
	f.Value = roundSig(f.Value, 4)
	b.Report(f)
	return f
}

// roundSig rounds x to d significant digits, so artifacts carry no meaningless digits.
func roundSig(x float64, d int) float64 {
	if x == 0 {
		return 0
	}
	mag := math.Floor(math.Log10(math.Abs(x)))
	p := math.Pow(10, float64(d-1)-mag)
	return math.Round(x*p) / p
}
