package agents

import (
	"encoding/json"
	"strings"
	"time"
)

// The store is read the way a user reads it: the real agent-rewind's --json outputs (their
// shapes are documented in docs/checkpoints.md, docs/barrier.md, docs/chain.md and
// docs/store.md). Only the members the harness checks are decoded.

// Checkpoint is one entry of `agent-rewind --json list`.
type Checkpoint struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"` // "auto" for the hooks', "normal" for one asked for (MCP, CLI), "safety"
	Label string `json:"label"`
	Call  *Call  `json:"call"` // the tool call an automatic checkpoint was taken before
}

// Call is a tool call the hooks took an automatic checkpoint before (or noted against one).
type Call struct {
	ID         string `json:"id"`
	Tool       string `json:"tool"`
	Summary    string `json:"summary"`
	Session    string `json:"session"`
	Agent      string `json:"agent"`
	Checkpoint string `json:"checkpoint"`
}

// List is `agent-rewind --json list`.
type List struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
	Current     string       `json:"current"`
	Sessions    []struct {
		ID    string `json:"id"`
		Agent string `json:"agent"`
		Calls []Call `json:"calls"`
	} `json:"sessions"`
}

// Calls returns every call of every session, in the list's order.
func (l List) Calls() []Call {
	var cs []Call
	for _, s := range l.Sessions {
		cs = append(cs, s.Calls...)
	}
	return cs
}

// Call returns the call with that id.
func (l List) Call(id string) (Call, bool) {
	for _, c := range l.Calls() {
		if c.ID == id {
			return c, true
		}
	}
	return Call{}, false
}

// Labels returns the labels of the checkpoints of that kind.
func (l List) Labels(kind string) []string {
	var out []string
	for _, c := range l.Checkpoints {
		if c.Kind == kind {
			out = append(out, c.Label)
		}
	}
	return out
}

// Effect is one record of `agent-rewind --json effects`.
type Effect struct {
	Key        string `json:"key"`
	State      string `json:"state"` // pending, spent, failed, released
	ToolUseID  string `json:"tool_use_id"`
	Rule       string `json:"rule"`
	Source     string `json:"source"`
	Generation int    `json:"generation"`
	History    []struct {
		At        time.Time `json:"at"`
		To        string    `json:"to"`
		Reason    string    `json:"reason"`
		By        string    `json:"by"`
		ToolUseID string    `json:"tool_use_id"`
	} `json:"history"`
}

// Verify is `agent-rewind --json chain verify`.
type Verify struct {
	OK   bool   `json:"ok"`
	Size int    `json:"size"`
	File string `json:"file"`
	Gaps struct {
		UnrecordedCheckpoints []string `json:"unrecordedCheckpoints"`
		UnrecordedEffects     []string `json:"unrecordedEffects"`
		MissingCheckpoints    []string `json:"missingCheckpoints"`
		MissingEffects        []string `json:"missingEffects"`
	} `json:"gaps"`
}

// Store is `agent-rewind --json store`: which store a folder's commands use, and why.
type Store struct {
	Workspace string `json:"workspace"`
	Store     string `json:"store"`
	ID        string `json:"id"`
}

// Rewound is `agent-rewind --json rewind ID`.
type Rewound struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Safety string `json:"safety"`
	Undo   string `json:"undo"`
}

// CLI runs the real agent-rewind in dir with --json and the Env's environment, and decodes its
// output into v (when not nil); a failure to run or decode fails the test, an exit status
// other than 0 is returned with the result.
func (e *Env) CLI(dir string, v any, args ...string) Result {
	e.T.Helper()
	r := e.run(false, dir, time.Minute, nil, e.Bin.Rewind, append([]string{"--json"}, args...)...)
	if v != nil && r.Code == 0 {
		if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
			e.T.Fatalf("agent-rewind --json %s: the output does not decode: %v\n%s", strings.Join(args, " "), err, r.Stdout)
		}
	}
	return r
}

// MustCLI is CLI for a command that must exit 0.
func (e *Env) MustCLI(dir string, v any, args ...string) {
	e.T.Helper()
	if r := e.CLI(dir, v, args...); r.Code != 0 {
		e.T.Fatalf("agent-rewind --json %s in %s: exit %d\n%s%s", strings.Join(args, " "), dir, r.Code, r.Stdout, r.Stderr)
	}
}

// List returns the project's timeline and tool calls, as `agent-rewind --json list` in dir
// prints them.
func (e *Env) List(dir string) List {
	e.T.Helper()
	var l List
	e.MustCLI(dir, &l, "list", "--limit", "1000")
	return l
}

// Effects returns the effect ledger of dir's store.
func (e *Env) Effects(dir string) []Effect {
	e.T.Helper()
	var out struct {
		Effects []Effect `json:"effects"`
	}
	e.MustCLI(dir, &out, "effects")
	return out.Effects
}

// StoreOf returns which store the commands run in dir use.
func (e *Env) StoreOf(dir string) Store {
	e.T.Helper()
	var s Store
	e.MustCLI(dir, &s, "store")
	return s
}

// VerifyChain checks dir's hash chain with the real CLI and fails the test when it is broken
// or disagrees with the store.
func (e *Env) VerifyChain(dir string) Verify {
	e.T.Helper()
	var v Verify
	r := e.CLI(dir, &v, "chain", "verify")
	if r.Code != 0 || !v.OK {
		e.T.Errorf("agent-rewind chain verify in %s: exit %d, ok %v\n%s%s", dir, r.Code, v.OK, r.Stdout, r.Stderr)
	}
	g := v.Gaps
	if n := len(g.UnrecordedCheckpoints) + len(g.UnrecordedEffects) + len(g.MissingCheckpoints) + len(g.MissingEffects); n > 0 {
		e.T.Errorf("agent-rewind chain verify in %s: %d gaps between the chain and the store: %+v", dir, n, g)
	}
	return v
}

// Rewind runs `agent-rewind rewind ID` in dir.
func (e *Env) Rewind(dir, id string) Rewound {
	e.T.Helper()
	var r Rewound
	e.MustCLI(dir, &r, "rewind", id)
	return r
}
