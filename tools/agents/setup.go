package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The clients set up as docs/agents.md tells a user: agent-rewind setup CLIENT, which writes the
// client's MCP and hook files with absolute paths, and agent-rewind doctor, which says what keeps
// them from working. Both are the real CLI, read through their --json outputs (docs/agents.md,
// "agent-rewind setup" and "agent-rewind doctor").

// SetupResult is `agent-rewind --json setup CLIENT`.
type SetupResult struct {
	Client    string   `json:"client"`
	Scope     string   `json:"scope"`
	Workspace string   `json:"workspace"`
	Notes     []string `json:"notes"`
	Files     []struct {
		Path    string `json:"path"`
		Action  string `json:"action"`
		Changes []struct {
			Op, At, Value string
		} `json:"changes"`
	} `json:"files"`
}

// Setup runs `agent-rewind --json setup ARGS` in dir with the Env's environment (prog: the
// agent-rewind to run, "" for the built one) and fails the test when it does not exit 0.
func (e *Env) Setup(dir, prog string, args ...string) SetupResult {
	e.T.Helper()
	if prog == "" {
		prog = e.Bin.Rewind
	}
	// codex app-server (--trust-hooks) takes a few seconds to start on a loaded machine.
	r := e.run(false, dir, 2*time.Minute, nil, prog, append([]string{"--json", "setup"}, args...)...)
	var s SetupResult
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &s) != nil {
		e.T.Fatalf("agent-rewind setup %s in %s: exit %d\n%s%s", strings.Join(args, " "), dir, r.Code, r.Stdout, r.Stderr)
	}
	return s
}

// DoctorResult is `agent-rewind --json doctor`, and its exit status.
type DoctorResult struct {
	Code     int
	OK       bool      `json:"ok"`
	Problems []Problem `json:"problems"`
	Clients  []struct {
		Client string `json:"client"`
		Found  bool   `json:"found"`
		Files  []struct {
			Path  string `json:"path"`
			Hooks []struct {
				Event, Matcher, Trust string
				Programs              []string
			} `json:"hooks"`
		} `json:"files"`
		Notes []string `json:"notes"`
	} `json:"clients"`
}

// Problem is one problem doctor reports, with the command that fixes it.
type Problem struct {
	Client, Problem, Fix string
}

// Doctor runs `agent-rewind --json doctor` in dir.
func (e *Env) Doctor(dir string) DoctorResult {
	e.T.Helper()
	r := e.run(false, dir, 2*time.Minute, nil, e.Bin.Rewind, "--json", "doctor")
	var d DoctorResult
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		e.T.Fatalf("agent-rewind --json doctor in %s: exit %d, %v\n%s%s", dir, r.Code, err, r.Stdout, r.Stderr)
	}
	d.Code = r.Code
	return d
}

// Of returns the problems of one client.
func (d DoctorResult) Of(client string) []Problem {
	var out []Problem
	for _, p := range d.Problems {
		if p.Client == client {
			out = append(out, p)
		}
	}
	return out
}

// Has reports whether doctor reports a problem holding problem, fixed by a command holding fix.
func (d DoctorResult) Has(problem, fix string) bool {
	for _, p := range d.Problems {
		if strings.Contains(p.Problem, problem) && strings.Contains(p.Fix, fix) {
			return true
		}
	}
	return false
}

// CopyBinaries copies agent-rewind and agent-rewind-hook into a folder of their own and
// returns the copy of agent-rewind: a setup made with it names the copy, which a test can then
// take away (the binary missing).
func (e *Env) CopyBinaries() string {
	e.T.Helper()
	dir := filepath.Join(e.Root, "installed")
	for _, p := range []string{e.Bin.Rewind, e.Bin.Hook} {
		b, err := os.ReadFile(p)
		if err != nil {
			e.T.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			e.T.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o755); err != nil {
			e.T.Fatal(err)
		}
	}
	return filepath.Join(dir, "agent-rewind")
}
