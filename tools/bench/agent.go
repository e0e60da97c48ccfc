package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// Agent is the agent-rewind binary built from this checkout, shared by every suite of a run.
// Most figures in the issues are per process or per command, so suites measure the real binary
// as a child process.
type Agent struct {
	Path      string
	StateHome string   // XDG_STATE_HOME of every child: the stores and anchors stay in the run's scratch
	Env       []string // added to every child's environment (With)

	mu  sync.Mutex
	has map[string]bool
}

// Agent builds ./cli/cmd/agent-rewind once per run (into the run's scratch directory, so the
// checkout is not made dirty), or takes the binary given with --agent, and returns it. Every go.work module is recorded as a source of
// the calling suite's figures: the binary is built from all of them.
func (b *Bench) Agent(ctx context.Context) (*Agent, error) {
	r := b.run
	r.agentOnce.Do(func() {
		if !contains(r.modules, "cli") {
			r.agentErr = &skipError{"module cli not present yet (not in go.work): no agent-rewind binary to measure"}
			return
		}
		if r.agentPath != "" { // --agent: measure this binary as it is
			r.agent = &Agent{Path: r.agentPath, StateHome: filepath.Join(r.tmp, "state"), has: map[string]bool{}}
			r.agentErr = os.MkdirAll(r.agent.StateHome, 0o700)
			return
		}
		path := filepath.Join(r.tmp, "bin", "agent-rewind")
		start := time.Now()
		// As the release builds it (tools/release/build.go): static, without symbol tables. A
		// cgo build links the C library dynamically and starts about 1 ms later per process.
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", path, "./cli/cmd/agent-rewind")
		cmd.Dir = r.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			r.agentErr = fmt.Errorf("go build ./cli/cmd/agent-rewind: %v: %s", err, strings.TrimSpace(errb.String()))
			return
		}
		fmt.Fprintf(r.log, "bench: built agent-rewind in %.1fs\n", time.Since(start).Seconds())
		r.agent = &Agent{Path: path, StateHome: filepath.Join(r.tmp, "state"), has: map[string]bool{}}
		if err := os.MkdirAll(r.agent.StateHome, 0o700); err != nil {
			r.agent, r.agentErr = nil, err
		}
	})
	if r.agentErr != nil {
		return nil, r.agentErr
	}
	b.UsesModules(r.modules...)
	return r.agent, nil
}

// Has reports whether the binary has the command named by words (for example "chain",
// "verify"): "agent-rewind <words> --help" exits 0 for a command it has and 80 (a usage error)
// for one it does not.
func (a *Agent) Has(ctx context.Context, words ...string) bool {
	key := strings.Join(words, " ")
	a.mu.Lock()
	defer a.mu.Unlock()
	if v, ok := a.has[key]; ok {
		return v
	}
	cmd := exec.CommandContext(ctx, a.Path, append(words, "--help")...)
	cmd.Dir = os.TempDir()
	cmd.Env = a.env()
	v := cmd.Run() == nil
	a.has[key] = v
	return v
}

// Require returns a skip error naming the first of the commands the binary lacks, or nil.
func (a *Agent) Require(ctx context.Context, b *Bench, commands ...[]string) error {
	for _, c := range commands {
		if !a.Has(ctx, c...) {
			return b.Skip("the built agent-rewind has no %q command yet (its module has not landed or is not wired into cli)", strings.Join(c, " "))
		}
	}
	return nil
}

// ResetState empties StateHome, where every workspace's store and anchor live: a suite that
// starts over from no store at all calls it.
func (a *Agent) ResetState() error {
	if err := os.RemoveAll(a.StateHome); err != nil {
		return err
	}
	return os.MkdirAll(a.StateHome, 0o700)
}

// Store returns the folder of the store of the workspace at dir ("agent-rewind --json store");
// an error when it has none.
func (a *Agent) Store(ctx context.Context, dir string) (string, error) {
	r, err := measure.Run(a.Command(ctx, dir, "--json", "store"))
	if err != nil {
		return "", err
	}
	var out struct{ Store string }
	if err := json.Unmarshal(r.Stdout, &out); err != nil || out.Store == "" {
		return "", fmt.Errorf("store --json printed no store: %v: %.200q", err, r.Stdout)
	}
	return out.Store, nil
}

// Command returns the binary run with args in dir (also passed as --workspace), with the
// environment described at env.
func (a *Agent) Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, a.Path, append([]string{"--workspace", dir}, args...)...)
	cmd.Dir = dir
	cmd.Env = a.env()
	return cmd
}

// env is this process's environment without any REWIND_* setting (a developer's own profile,
// port or storage key must not change what is measured) and with XDG_STATE_HOME in the run's
// scratch directory.
func (a *Agent) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "REWIND_") || strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "XDG_STATE_HOME="+a.StateHome), a.Env...)
}

// With returns the agent with kv (NAME=value) added to its children's environment.
func (a *Agent) With(kv ...string) *Agent {
	return &Agent{Path: a.Path, StateHome: a.StateHome, Env: append(slices.Clone(a.Env), kv...), has: map[string]bool{}}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
