// Package fakeworkspace is an in-memory mcpserver.Workspace for tests: checkpoints are records
// without files, the effect ledger is a map, failure memory a slice. It behaves like the real
// workspace where the MCP surface can see it: ids, safety checkpoints, refusals of spent keys,
// failure notes that survive rewinds. Everything is deterministic, including the clock.
package fakeworkspace

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/mcpserver"
)

// Epoch is the fake clock's first reading; each Workspace call that records something advances
// the clock by one minute.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Root is the folder the fake says it checkpoints.
const Root = "/home/dev/project"

// Workspace is the fake. The zero value is not usable: call New.
type Workspace struct {
	mu      sync.Mutex
	clock   time.Time
	entries []mcpserver.TimelineEntry // oldest first
	current string
	effects map[string]effect
	notes   map[string][]mcpserver.FailureNote
	calls   []mcpserver.CallStep // oldest first

	// Errs, keyed by method name ("Checkpoint", "Rewind", …), makes that method fail with the
	// error instead of acting. Set it before use.
	Errs map[string]error
}

type effect struct {
	payload []byte
	at      time.Time
	current string
}

// New returns an empty fake workspace.
func New() *Workspace {
	return &Workspace{clock: Epoch, effects: map[string]effect{}, notes: map[string][]mcpserver.FailureNote{}}
}

// Now is the fake clock's current reading.
func (w *Workspace) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clock
}

func (w *Workspace) tick() time.Time {
	w.clock = w.clock.Add(time.Minute)
	return w.clock
}

func (w *Workspace) fail(method string) error { return w.Errs[method] }

// mint records a new checkpoint on top of the current one and makes it current.
func (w *Workspace) mint(label, kind string) mcpserver.TimelineEntry {
	e := mcpserver.TimelineEntry{
		ID:     fmt.Sprintf("cp%04d", len(w.entries)+1),
		Time:   w.tick(),
		Label:  label,
		Parent: w.current,
		Kind:   kind,
	}
	w.entries = append(w.entries, e)
	w.current = e.ID
	return e
}

// find returns the index of checkpoint id, or of the checkpoint taken before tool call id.
func (w *Workspace) find(id string) (int, error) {
	for _, c := range w.calls {
		if c.ID == id {
			id = c.Checkpoint
		}
	}
	for i, e := range w.entries {
		if e.ID == id {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no checkpoint %q in this workspace: %w", id, mcpserver.ErrUnknownCheckpoint)
}

// Checkpoint implements mcpserver.Workspace.
func (w *Workspace) Checkpoint(_ context.Context, label string) (mcpserver.CheckpointResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.fail("Checkpoint"); err != nil {
		return mcpserver.CheckpointResult{}, err
	}
	e := w.mint(label, mcpserver.KindCheckpoint)
	n := int64(len(w.entries))
	return mcpserver.CheckpointResult{ID: e.ID, Label: label, Time: e.Time, Workspace: Root, Files: 10 + n, Bytes: 4096 * (10 + n), Skipped: 0}, nil
}

// AutoCheckpoint takes the automatic checkpoint an agent's hook takes before tool call callID of
// session (labelled label, "Bash: npm install"), as the real workspace does, and returns its id.
func (w *Workspace) AutoCheckpoint(session, callID, label string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.mint(label, mcpserver.KindAuto)
	w.calls = append(w.calls, mcpserver.CallStep{ID: callID, Label: label, Checkpoint: e.ID, Session: session})
	return e.ID
}

// List implements mcpserver.Workspace.
func (w *Workspace) List(context.Context) (mcpserver.ListResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.fail("List"); err != nil {
		return mcpserver.ListResult{}, err
	}
	r := mcpserver.ListResult{Current: w.current}
	for _, e := range slices.Backward(w.entries) {
		r.Entries = append(r.Entries, e)
	}
	for _, c := range slices.Backward(w.calls) {
		r.Calls = append(r.Calls, c)
	}
	return r, nil
}

// restore moves the current position to id after a safety checkpoint of the state left.
func (w *Workspace) restore(method, id string) (mcpserver.RestoreResult, error) {
	if err := w.fail(method); err != nil {
		return mcpserver.RestoreResult{}, err
	}
	i, err := w.find(id)
	if err != nil {
		return mcpserver.RestoreResult{}, err
	}
	id = w.entries[i].ID // a tool call id restores the checkpoint before the call
	verb := "rewind"
	if method == "Replay" {
		verb = "replay"
	}
	safety := w.mint(fmt.Sprintf("before %s to %s", verb, id), mcpserver.KindSafety)
	w.current = id
	return mcpserver.RestoreResult{
		ID: id, SafetyID: safety.ID,
		Added: 1, Modified: 1, Deleted: 1,
		Paths: []string{"new.txt", "main.go", "old.txt"},
	}, nil
}

// Rewind implements mcpserver.Workspace.
// With Conversation, Resume is a made-up command: the fake has no sessions.
func (w *Workspace) Rewind(_ context.Context, req mcpserver.RewindRequest) (mcpserver.RestoreResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, err := w.restore("Rewind", req.ID)
	if err == nil && req.Conversation {
		r.Resume = "claude --resume fake-fork-of-" + req.ID
	}
	return r, err
}

// Replay implements mcpserver.Workspace.
func (w *Workspace) Replay(_ context.Context, id string) (mcpserver.RestoreResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.restore("Replay", id)
}

// GuardEffect implements mcpserver.Workspace: a new key is admitted and spent at once; a spent
// key is refused, with its own code when the payload differs.
func (w *Workspace) GuardEffect(_ context.Context, req mcpserver.GuardRequest) (mcpserver.GuardResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.fail("GuardEffect"); err != nil {
		return mcpserver.GuardResult{}, err
	}
	r := mcpserver.GuardResult{Key: req.Key, State: "spent"}
	prev, seen := w.effects[req.Key]
	switch {
	case !seen:
		w.effects[req.Key] = effect{payload: bytes.Clone(req.Payload), at: w.tick(), current: w.current}
		r.Admitted, r.Code = true, "admitted"
		r.Reason = "first use of this key; it is now spent"
	case !bytes.Equal(prev.payload, req.Payload):
		r.Code = "payload_mismatch"
		r.Reason = fmt.Sprintf("key %q already fired at %s with other parameters; use a new key only for a distinct new effect", req.Key, prev.at.Format(time.RFC3339))
	default:
		r.Code = "spent"
		r.Reason = fmt.Sprintf("key %q already fired at %s (checkpoint %s was current); rewinds do not undo external effects; use a new key only for a distinct new effect", req.Key, prev.at.Format(time.RFC3339), prev.current)
	}
	return r, nil
}

// Savings implements mcpserver.Workspace: no gateway has run.
func (w *Workspace) Savings(context.Context) (mcpserver.SavingsResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.fail("Savings"); err != nil {
		return mcpserver.SavingsResult{}, err
	}
	return mcpserver.SavingsResult{Note: "no gateway receipt yet; replay savings only"}, nil
}

// BacktrackCandidates implements mcpserver.Workspace: every checkpoint taken on request, newest
// first; Changed is how many checkpoints were taken after it.
func (w *Workspace) BacktrackCandidates(context.Context) (mcpserver.CandidatesResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.fail("BacktrackCandidates"); err != nil {
		return mcpserver.CandidatesResult{}, err
	}
	var r mcpserver.CandidatesResult
	for i, e := range slices.Backward(w.entries) {
		if e.Kind != mcpserver.KindCheckpoint {
			continue
		}
		r.Candidates = append(r.Candidates, mcpserver.Candidate{
			ID: e.ID, Label: e.Label, Time: e.Time,
			Changed: int64(len(w.entries) - 1 - i),
			Notes:   slices.Clone(w.notes[e.ID]),
		})
	}
	return r, nil
}

// BacktrackCommit implements mcpserver.Workspace.
func (w *Workspace) BacktrackCommit(_ context.Context, req mcpserver.BacktrackRequest) (mcpserver.BacktrackResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.fail("BacktrackCommit"); err != nil {
		return mcpserver.BacktrackResult{}, err
	}
	if _, err := w.find(req.ID); err != nil {
		return mcpserver.BacktrackResult{}, err
	}
	w.notes[req.ID] = append(w.notes[req.ID], mcpserver.FailureNote{Time: w.tick(), WhatFailed: req.WhatFailed, Lesson: req.Lesson})
	rw, err := w.restore("Rewind", req.ID)
	if err != nil {
		return mcpserver.BacktrackResult{}, err
	}
	return mcpserver.BacktrackResult{Notes: slices.Clone(w.notes[req.ID]), Rewind: rw}, nil
}
