package agentws_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
	"github.com/agent-rewind/rewind/gateway"
	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/snapshot"
)

func TestNewNeedsAFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	write(t, filepath.Dir(file), "f", "x")
	for _, root := range []string{file, filepath.Join(t.TempDir(), "missing")} {
		if _, err := agentws.New(root, agentws.Options{}); err == nil || !strings.Contains(err.Error(), "--workspace") {
			t.Errorf("New(%s): %v", root, err)
		}
	}
}

// TestNothingCreatedUntilWrite: the calls that only read, and the calls that fail on an unknown
// id, leave a folder without a store untouched.
func TestNothingCreatedUntilWrite(t *testing.T) {
	w, root := newWorkspace(t, map[string]string{"a.txt": "a"})
	ctx := t.Context()
	l, err := w.List(ctx)
	if err != nil || len(l.Entries) != 0 || l.Entries == nil || l.Current != "" {
		t.Errorf("List: %+v, %v", l, err)
	}
	c, err := w.BacktrackCandidates(ctx)
	if err != nil || len(c.Candidates) != 0 || c.Candidates == nil {
		t.Errorf("BacktrackCandidates: %+v, %v", c, err)
	}
	s, err := w.Savings(ctx)
	if err != nil || s.Note != agentws.NoSavingsNote || s.ReplayedCalls != 0 {
		t.Errorf("Savings: %+v, %v", s, err)
	}
	for name, call := range map[string]func() error{
		"Rewind": func() error { _, err := w.Rewind(ctx, mcpserver.RewindRequest{ID: "0123456789ab"}); return err },
		"Replay": func() error { _, err := w.Replay(ctx, "0123456789ab"); return err },
		"BacktrackCommit": func() error {
			_, err := w.BacktrackCommit(ctx, mcpserver.BacktrackRequest{ID: "0123456789ab", WhatFailed: "x"})
			return err
		},
	} {
		err := call()
		if !errors.Is(err, mcpserver.ErrUnknownCheckpoint) || !errors.Is(err, snapshot.ErrNotFound) || !strings.Contains(err.Error(), "no checkpoints yet") {
			t.Errorf("%s in a fresh folder: %v", name, err)
		}
	}
	if workspace.HasStore(root) {
		t.Fatal("a store was created by calls that write nothing")
	}
	if _, err := w.Checkpoint(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if !exists(store(t, root), "format") || exists(root, workspace.LegacyDir) {
		t.Fatal("checkpoint did not create the store outside the workspace")
	}
}

func TestCheckpointListRewindReplay(t *testing.T) {
	w, root := newWorkspace(t, map[string]string{"keep.txt": "keep", "edit.txt": "v1", "gone.txt": "g"})
	ctx := t.Context()
	cp, err := w.Checkpoint(ctx, "before")
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.ID) != 12 || cp.Label != "before" || cp.Files != 3 || cp.Bytes != 7 || cp.Workspace != w.Root() || cp.Time.IsZero() {
		t.Fatalf("Checkpoint = %+v", cp)
	}
	write(t, root, "edit.txt", "v2")
	write(t, root, "new.txt", "n")
	os.Remove(filepath.Join(root, "gone.txt"))

	rw, err := w.Rewind(ctx, mcpserver.RewindRequest{ID: cp.ID[:6]}) // a prefix resolves
	if err != nil {
		t.Fatal(err)
	}
	if rw.ID != cp.ID || rw.SafetyID == "" || rw.SafetyID == cp.ID || rw.Added != 1 || rw.Modified != 1 || rw.Deleted != 1 {
		t.Fatalf("Rewind = %+v", rw)
	}
	if want := []string{"edit.txt", "gone.txt", "new.txt"}; !slices.Equal(rw.Paths, want) {
		t.Errorf("Rewind paths = %v, want %v", rw.Paths, want)
	}
	if read(t, root, "edit.txt") != "v1" || read(t, root, "gone.txt") != "g" || exists(root, "new.txt") {
		t.Fatal("rewind did not restore the files")
	}

	l, err := w.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l.Current != cp.ID || len(l.Entries) != 2 || l.Entries[0].ID != rw.SafetyID || l.Entries[0].Kind != mcpserver.KindSafety ||
		l.Entries[1].ID != cp.ID || l.Entries[1].Kind != mcpserver.KindCheckpoint ||
		l.Entries[0].Parent != cp.ID {
		t.Fatalf("List = %+v", l)
	}

	rp, err := w.Replay(ctx, rw.SafetyID)
	if err != nil {
		t.Fatal(err)
	}
	if rp.ID != rw.SafetyID || rp.Added != 1 || rp.Deleted != 1 || rp.Modified != 1 {
		t.Fatalf("Replay = %+v", rp)
	}
	if read(t, root, "edit.txt") != "v2" || !exists(root, "new.txt") || exists(root, "gone.txt") {
		t.Fatal("replay did not bring the later state back")
	}
	if _, err := w.Replay(ctx, cp.ID); !errors.Is(err, snapshot.ErrNotForward) || errors.Is(err, mcpserver.ErrUnknownCheckpoint) {
		t.Fatalf("replay backwards: %v", err)
	}
	if got := kinds(t, root); got["checkpoint"] != 2 || got["rewind"] != 1 || got["replay"] != 1 {
		t.Fatalf("chain kinds = %v", got)
	}
}

func TestRestorePathsAreCapped(t *testing.T) {
	w, root := newWorkspace(t, nil)
	ctx := t.Context()
	cp, err := w.Checkpoint(ctx, "empty")
	if err != nil {
		t.Fatal(err)
	}
	for i := range mcpserver.MaxPaths + 5 {
		write(t, root, filepath.Join("d", strings.Repeat("x", i+1)), "x")
	}
	rw, err := w.Rewind(ctx, mcpserver.RewindRequest{ID: cp.ID})
	if err != nil {
		t.Fatal(err)
	}
	if rw.Deleted != mcpserver.MaxPaths+6 || len(rw.Paths) != mcpserver.MaxPaths || !rw.Truncated { // the files and d/
		t.Fatalf("Rewind = %+v", rw)
	}
}

func TestUnknownCheckpointKeepsTheStoreMessage(t *testing.T) {
	w, _ := newWorkspace(t, map[string]string{"a": "a"})
	ctx := t.Context()
	if _, err := w.Checkpoint(ctx, ""); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ffffffffffff", "zz", "abc"} {
		_, err := w.Rewind(ctx, mcpserver.RewindRequest{ID: id})
		if !errors.Is(err, mcpserver.ErrUnknownCheckpoint) || !errors.Is(err, snapshot.ErrNotFound) || !strings.HasPrefix(err.Error(), snapshot.ErrNotFound.Error()) {
			t.Errorf("Rewind(%q): %v", id, err)
		}
	}
}

// TestNotRecordedIsAnError: a checkpoint that is durable but missing from the chain is an error
// the agent sees, naming the checkpoint.
func TestNotRecordedIsAnError(t *testing.T) {
	w, root := newWorkspace(t, map[string]string{"a": "a"})
	ctx := t.Context()
	if _, err := w.Checkpoint(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// A torn last line (a crash mid-append) stops the chain from opening: nothing more can be
	// recorded until a person runs "agent-rewind chain recover".
	f, err := os.OpenFile(filepath.Join(store(t, root), "chain.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":1,"ki`)
	f.Close()
	w2, err := agentws.New(root, agentws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	write(t, root, "a", "b")
	_, err = w2.Checkpoint(ctx, "second")
	if !errors.Is(err, snapshot.ErrNotRecorded) || !strings.Contains(err.Error(), "durable") {
		t.Fatalf("Checkpoint with a torn chain: %v", err)
	}
	g, err := w2.GuardEffect(ctx, mcpserver.GuardRequest{Key: "k"})
	if err == nil || g.Admitted || !strings.Contains(err.Error(), "do NOT perform") {
		t.Fatalf("GuardEffect with a torn chain: %+v, %v", g, err)
	}
}

func TestGuardEffect(t *testing.T) {
	w, root := newWorkspace(t, map[string]string{"a": "a"})
	ctx := t.Context()
	cp, err := w.Checkpoint(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	req := mcpserver.GuardRequest{Key: "deploy:prod:v1", Payload: json.RawMessage(`{"v": 1, "env": "prod"}`), Description: "deploy v1"}
	g1, err := w.GuardEffect(ctx, req)
	if err != nil || !g1.Admitted || g1.Code != "admitted" || g1.State != "spent" || g1.Key != req.Key {
		t.Fatalf("first guard: %+v, %v", g1, err)
	}
	req.Payload = json.RawMessage(`{"env":"prod","v":1}`) // the same value written another way
	g2, err := w.GuardEffect(ctx, req)
	if err != nil || g2.Admitted || g2.Code != "spent" || !strings.Contains(g2.Reason, "guard_effect with a new key") {
		t.Fatalf("second guard: %+v, %v", g2, err)
	}
	req.Payload = json.RawMessage(`{"v":2}`)
	g3, err := w.GuardEffect(ctx, req)
	if err != nil || g3.Admitted || g3.Code != "payload_mismatch" {
		t.Fatalf("guard with another payload: %+v, %v", g3, err)
	}
	var effect struct {
		Checkpoint string `json:"checkpoint"`
		Source     string `json:"source"`
	}
	for _, e := range chainEntries(t, root) {
		if e.Kind == "effect" {
			json.Unmarshal(e.Data, &effect)
		}
	}
	if effect.Checkpoint != cp.ID || effect.Source != agentws.GuardSource {
		t.Fatalf("effect entry %+v, want checkpoint %s, source mcp", effect, cp.ID)
	}
	if got := kinds(t, root); got["effect"] != 1 || got["refusal"] != 2 {
		t.Fatalf("chain kinds = %v", got)
	}
}

// TestGuardCreatesTheWorkspace: an effect can be guarded before any checkpoint.
func TestGuardCreatesTheWorkspace(t *testing.T) {
	w, root := newWorkspace(t, nil)
	g, err := w.GuardEffect(t.Context(), mcpserver.GuardRequest{Key: "email:1"})
	if err != nil || !g.Admitted {
		t.Fatalf("guard: %+v, %v", g, err)
	}
	if !exists(store(t, root), "effects") {
		t.Fatal("no ledger")
	}
}

func TestSavingsReadsTheGatewaysReceipt(t *testing.T) {
	w, root := newWorkspace(t, nil)
	if _, err := w.Checkpoint(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	write(t, store(t, root), "savings.json", `{"kind":"agent-rewind/savings/v1","note":"x","replayed_calls":3,
		"avoided_tokens":{"input":1200,"output":300,"cache_read":50,"cache_write":7},"avoided_cost_usd":0.0125,
		"unpriced_calls":0,"by_model":{},"prices":{"source":"s","date":"2026-11-30"}}`)
	s, err := w.Savings(t.Context())
	want := mcpserver.SavingsResult{ReplayedCalls: 3, AvoidedTokens: 1200 + 300 + 50 + 7,
		AvoidedCostUSD: 0.0125, Note: gateway.SavingsNote}
	if err != nil || s != want {
		t.Fatalf("Savings = %+v, %v; want %+v", s, err, want)
	}
	write(t, store(t, root), "savings.json", `{"kind":"agent-rewind/savings/v9"}`)
	if _, err := w.Savings(t.Context()); !errors.Is(err, gateway.ErrSavingsCorrupt) {
		t.Fatalf("Savings with a receipt of another kind: %v", err)
	}
}

// TestSeesOtherWriters: a long-lived Workspace sees checkpoints that another one (standing for
// another process: the CLI, a second server) made meanwhile, and can rewind to them.
func TestSeesOtherWriters(t *testing.T) {
	w1, root := newWorkspace(t, map[string]string{"a": "1"})
	ctx := t.Context()
	if _, err := w1.List(ctx); err != nil { // before the store exists
		t.Fatal(err)
	}
	w2, err := agentws.New(root, agentws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	cp, err := w2.Checkpoint(ctx, "by w2")
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "a", "2")
	l, err := w1.List(ctx)
	if err != nil || len(l.Entries) != 1 || l.Entries[0].ID != cp.ID {
		t.Fatalf("List through w1: %+v, %v", l, err)
	}
	if _, err := w1.Rewind(ctx, mcpserver.RewindRequest{ID: cp.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.Checkpoint(ctx, "again"); err != nil { // w2's chain catches up with w1's entries
		t.Fatal(err)
	}
	if read(t, root, "a") != "1" {
		t.Fatal("not rewound")
	}
}

// TestConcurrentCalls runs calls of every kind in parallel (the MCP client may): under -race,
// and every call must succeed.
func TestConcurrentCalls(t *testing.T) {
	w, root := newWorkspace(t, map[string]string{"a": "a"})
	ctx := t.Context()
	base, err := w.Checkpoint(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 4 {
		wg.Go(func() {
			for j := range 3 {
				calls := []func(context.Context) error{
					func(ctx context.Context) error { _, err := w.Checkpoint(ctx, "c"); return err },
					func(ctx context.Context) error { _, err := w.List(ctx); return err },
					func(ctx context.Context) error { _, err := w.BacktrackCandidates(ctx); return err },
					func(ctx context.Context) error {
						_, err := w.GuardEffect(ctx, mcpserver.GuardRequest{Key: "k" + string(rune('a'+i)) + string(rune('a'+j))})
						return err
					},
					func(ctx context.Context) error {
						_, err := w.Rewind(ctx, mcpserver.RewindRequest{ID: base.ID})
						return err
					},
					func(ctx context.Context) error {
						_, err := w.BacktrackCommit(ctx, mcpserver.BacktrackRequest{ID: base.ID, WhatFailed: "parallel"})
						return err
					},
				}
				if err := calls[(i+j)%len(calls)](ctx); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := kinds(t, root); got["effect"] != 3 { // guards at (i, j) = (1, 2), (2, 1), (3, 0)
		t.Errorf("chain kinds = %v", got)
	}
}

// TestStateDirWithoutFormatYet: a legacy .rewind/ whose format file an earlier version had not
// written yet is not an error for a read: it is moved out of the workspace like any other.
func TestStateDirWithoutFormatYet(t *testing.T) {
	w, root := newWorkspace(t, nil)
	if err := os.Mkdir(filepath.Join(root, workspace.LegacyDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if l, err := w.List(t.Context()); err != nil || len(l.Entries) != 0 {
		t.Fatalf("List: %+v, %v", l, err)
	}
}
