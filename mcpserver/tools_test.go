package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWorkflow walks every tool's happy path on the fake workspace, in the order an agent would
// use them: checkpoint, work, rewind, replay, guard twice, recover with failure memory.
func TestWorkflow(t *testing.T) {
	ws := fakeworkspace.New()
	cs := connect(t, ws, mcpserver.ProfileAll)

	var cp mcpserver.CheckpointResult
	text := callOK(t, cs, "checkpoint", map[string]any{"label": "before refactor"}, &cp)
	if cp.ID != "cp0001" || cp.Label != "before refactor" || cp.Files == 0 || cp.Bytes == 0 || cp.Time.IsZero() {
		t.Errorf("checkpoint result = %+v", cp)
	}
	mustContain(t, "checkpoint text", text, "cp0001", `"before refactor"`, "Keep this id", "rewind cp0001")

	var cp2 mcpserver.CheckpointResult
	callOK(t, cs, "checkpoint", map[string]any{}, &cp2) // label is optional
	if cp2.ID != "cp0002" || cp2.Label != "" {
		t.Errorf("second checkpoint = %+v", cp2)
	}

	var rw mcpserver.RestoreResult
	text = callOK(t, cs, "rewind", map[string]any{"id": cp.ID}, &rw)
	want := mcpserver.RestoreResult{ID: "cp0001", SafetyID: "cp0003", Added: 1, Modified: 1, Deleted: 1, Paths: []string{"new.txt", "main.go", "old.txt"}, InUse: []string{}, Next: "rewind cp0003 undoes this"}
	if diff := cmp.Diff(want, rw); diff != "" {
		t.Errorf("rewind result (-want +got):\n%s", diff)
	}
	mustContain(t, "rewind text", text, "Rewound to cp0001", "1 added, 1 modified, 1 deleted", "new.txt, main.go, old.txt", "cp0003", "undo")

	var ls mcpserver.ListResult
	text = callOK(t, cs, "list", nil, &ls)
	if ls.Current != "cp0001" || len(ls.Entries) != 3 || ls.Truncated {
		t.Fatalf("list = %+v", ls)
	}
	if e := ls.Entries[0]; e.ID != "cp0003" || e.Kind != mcpserver.KindSafety || e.Parent != "cp0002" {
		t.Errorf("newest entry = %+v", e)
	}
	if e := ls.Entries[2]; e.ID != "cp0001" || e.Kind != mcpserver.KindCheckpoint {
		t.Errorf("oldest entry = %+v", e)
	}
	mustContain(t, "list text", text, "newest first", "* cp0001", "  cp0003", "safety", "(parent cp0002)")

	var rp mcpserver.RestoreResult
	text = callOK(t, cs, "replay", map[string]any{"id": rw.SafetyID}, &rp)
	if rp.ID != "cp0003" || rp.SafetyID != "cp0004" {
		t.Errorf("replay = %+v", rp)
	}
	mustContain(t, "replay text", text, "Replayed to cp0003")

	var g1, g2, g3 mcpserver.GuardResult
	args := map[string]any{"key": "deploy:prod:v42", "payload": map[string]any{"version": 42}, "description": "deploy v42"}
	text = callOK(t, cs, "guard_effect", args, &g1)
	if !g1.Admitted || g1.Code != "admitted" || g1.Key != "deploy:prod:v42" || g1.State != "spent" {
		t.Errorf("first guard = %+v", g1)
	}
	mustContain(t, "admitted text", text, "ADMITTED", "deploy:prod:v42")
	text = callOK(t, cs, "guard_effect", args, &g2)
	if g2.Admitted || g2.Code != "spent" || !strings.Contains(g2.Reason, "already fired") {
		t.Errorf("second guard = %+v", g2)
	}
	if !strings.HasPrefix(text, "REFUSED (spent): do NOT perform") {
		t.Errorf("refusal text does not lead with the refusal: %s", text)
	}
	args["payload"] = map[string]any{"version": 43}
	callOK(t, cs, "guard_effect", args, &g3)
	if g3.Admitted || g3.Code != "payload_mismatch" {
		t.Errorf("guard with other payload = %+v", g3)
	}

	var sv mcpserver.SavingsResult
	text = callOK(t, cs, "savings", nil, &sv)
	if sv.ReplayedCalls != 0 || sv.AvoidedCostUSD != 0 || !strings.Contains(sv.Note, "replay savings only") {
		t.Errorf("savings = %+v", sv)
	}
	mustContain(t, "savings text", text, "0 calls replayed", "replay savings only")

	var cands mcpserver.CandidatesResult
	callOK(t, cs, "backtrack_candidates", nil, &cands)
	if len(cands.Candidates) != 2 || cands.Candidates[0].ID != "cp0002" || cands.Candidates[1].ID != "cp0001" {
		t.Fatalf("candidates = %+v", cands)
	}
	c := cands.Candidates[1]
	// The fake clock ticks a minute per record: cp0001 was taken at epoch+1m, the server's
	// clock reads epoch+1h.
	if c.AgeSeconds != 59*60 || c.Changed != 3 || len(c.Notes) != 0 {
		t.Errorf("candidate cp0001 = %+v", c)
	}

	var bc mcpserver.BacktrackResult
	text = callOK(t, cs, "backtrack_commit", map[string]any{"id": "cp0001", "what_failed": "regex rewrite broke parsing", "lesson": "use the AST"}, &bc)
	if len(bc.Notes) != 1 || bc.Notes[0].WhatFailed != "regex rewrite broke parsing" || bc.Notes[0].Lesson != "use the AST" || bc.Rewind.ID != "cp0001" || bc.Rewind.SafetyID == "" {
		t.Errorf("backtrack_commit = %+v", bc)
	}
	mustContain(t, "commit text", text, "Recorded the failure against cp0001", "Rewound to cp0001", "failed: regex rewrite broke parsing; lesson: use the AST")

	text = callOK(t, cs, "backtrack_candidates", nil, &cands)
	var notes []mcpserver.FailureNote
	for _, c := range cands.Candidates {
		if c.ID == "cp0001" {
			notes = c.Notes
		}
	}
	if len(notes) != 1 || notes[0].Lesson != "use the AST" {
		t.Errorf("after backtrack_commit, candidates = %+v", cands)
	}
	mustContain(t, "candidates text", text, "most promising first", "regex rewrite broke parsing")
}

// stub is a Workspace whose methods are the fake's unless overridden, and which counts calls.
type stub struct {
	*fakeworkspace.Workspace
	calls     int
	rewind    func(id string) (mcpserver.RestoreResult, error)
	rewindReq func(req mcpserver.RewindRequest) // sees each rewind request
	list      func() (mcpserver.ListResult, error)
	cands     func() (mcpserver.CandidatesResult, error)
	commit    func(mcpserver.BacktrackRequest) (mcpserver.BacktrackResult, error)
	savings   func() (mcpserver.SavingsResult, error)
}

func newStub() *stub { return &stub{Workspace: fakeworkspace.New()} }

func (s *stub) Checkpoint(ctx context.Context, label string) (mcpserver.CheckpointResult, error) {
	s.calls++
	return s.Workspace.Checkpoint(ctx, label)
}

func (s *stub) GuardEffect(ctx context.Context, req mcpserver.GuardRequest) (mcpserver.GuardResult, error) {
	s.calls++
	return s.Workspace.GuardEffect(ctx, req)
}

func (s *stub) Rewind(ctx context.Context, req mcpserver.RewindRequest) (mcpserver.RestoreResult, error) {
	s.calls++
	if s.rewindReq != nil {
		s.rewindReq(req)
	}
	if s.rewind != nil {
		return s.rewind(req.ID)
	}
	return s.Workspace.Rewind(ctx, req)
}

func (s *stub) Replay(ctx context.Context, id string) (mcpserver.RestoreResult, error) {
	s.calls++
	return s.Workspace.Replay(ctx, id)
}

func (s *stub) List(ctx context.Context) (mcpserver.ListResult, error) {
	s.calls++
	if s.list != nil {
		return s.list()
	}
	return s.Workspace.List(ctx)
}

func (s *stub) Savings(ctx context.Context) (mcpserver.SavingsResult, error) {
	s.calls++
	if s.savings != nil {
		return s.savings()
	}
	return s.Workspace.Savings(ctx)
}

func (s *stub) BacktrackCandidates(ctx context.Context) (mcpserver.CandidatesResult, error) {
	s.calls++
	if s.cands != nil {
		return s.cands()
	}
	return s.Workspace.BacktrackCandidates(ctx)
}

func (s *stub) BacktrackCommit(ctx context.Context, req mcpserver.BacktrackRequest) (mcpserver.BacktrackResult, error) {
	s.calls++
	if s.commit != nil {
		return s.commit(req)
	}
	return s.Workspace.BacktrackCommit(ctx, req)
}

// TestWorkspaceErrors checks every tool's error path: a Workspace error becomes a tool error whose
// text names the tool, carries the Workspace's message, and says what to do.
func TestWorkspaceErrors(t *testing.T) {
	methods := map[string]string{
		"checkpoint": "Checkpoint", "list": "List", "rewind": "Rewind", "replay": "Replay",
		"guard_effect": "GuardEffect", "savings": "Savings",
		"backtrack_candidates": "BacktrackCandidates", "backtrack_commit": "BacktrackCommit",
	}
	args := map[string]map[string]any{
		"checkpoint":       {"label": "x"},
		"rewind":           {"id": "cp0001"},
		"replay":           {"id": "cp0001"},
		"guard_effect":     {"key": "k"},
		"backtrack_commit": {"id": "cp0001", "what_failed": "it broke"},
	}
	for tool, method := range methods {
		t.Run(tool, func(t *testing.T) {
			ws := fakeworkspace.New()
			ws.Errs = map[string]error{method: errors.New("disk full writing .rewind/objects: free some space")}
			cs := connect(t, ws, mcpserver.ProfileAll)
			text := callErr(t, cs, tool, args[tool])
			mustContain(t, "error text", text, tool+" failed", "disk full writing .rewind/objects: free some space", "call "+tool+" again")
		})
	}

	t.Run("busy", func(t *testing.T) {
		ws := fakeworkspace.New()
		ws.Errs = map[string]error{"Checkpoint": errors.Join(mcpserver.ErrBusy, errors.New(".rewind/lock is held by pid 42"))}
		cs := connect(t, ws, mcpserver.ProfileLean)
		mustContain(t, "busy error", callErr(t, cs, "checkpoint", nil), "pid 42", "wait a moment and call checkpoint again")
	})
}

// TestUnknownCheckpoint checks the hint for an id that names no checkpoint: it points at list
// only where the profile has list.
func TestUnknownCheckpoint(t *testing.T) {
	lean := connect(t, fakeworkspace.New(), mcpserver.ProfileLean)
	text := callErr(t, lean, "rewind", map[string]any{"id": "cp9999"})
	mustContain(t, "lean error", text, `rewind failed: no checkpoint "cp9999"`, "Use an id that checkpoint returned.")
	if strings.Contains(text, "list") {
		t.Errorf("lean error names list, which lean hides: %s", text)
	}
	recovery := connect(t, fakeworkspace.New(), mcpserver.ProfileRecovery)
	for _, tool := range []string{"rewind", "replay"} {
		mustContain(t, tool+" error", callErr(t, recovery, tool, map[string]any{"id": "cp9999"}), "call list to see the timeline")
	}
	mustContain(t, "commit error", callErr(t, recovery, "backtrack_commit", map[string]any{"id": "cp9999", "what_failed": "x"}), "call list")
}

// TestInputValidation checks that bad inputs are tool errors that name the argument and the fix,
// and that the Workspace never sees them.
func TestInputValidation(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"checkpoint", map[string]any{"label": long(mcpserver.MaxLabelLen + 1)}, []string{"invalid label", "at most 200"}},
		{"checkpoint", map[string]any{"label": "two\nlines"}, []string{"invalid label", "control character"}},
		{"checkpoint", map[string]any{"label": 7}, []string{"label"}}, // wrong type: the SDK's schema check
		{"checkpoint", map[string]any{"lable": "typo"}, []string{"lable"}},
		{"rewind", map[string]any{}, []string{"id"}},
		{"rewind", map[string]any{"id": ""}, []string{"invalid id", "required"}},
		{"rewind", map[string]any{"id": "cp 0001"}, []string{"invalid id", "letters, digits"}},
		{"rewind", map[string]any{"id": "../../etc"}, []string{"invalid id"}},
		{"rewind", map[string]any{"id": long(mcpserver.MaxToolCallIDLen + 1)}, []string{"invalid id", "at most 256"}},
		{"rewind", map[string]any{"id": "prompt:"}, []string{"invalid id", "prompt:N"}},
		{"rewind", map[string]any{"id": "prompt:0"}, []string{"invalid id", "1 or more"}},
		{"rewind", map[string]any{"id": "prompt:2x"}, []string{"invalid id", "prompt:N"}},
		{"rewind", map[string]any{"id": "prompt:1234567890"}, []string{"invalid id", "prompt:N"}},
		{"replay", map[string]any{"id": "prompt:2"}, []string{"invalid id", "letters, digits"}},
		{"backtrack_commit", map[string]any{"id": long(mcpserver.MaxIDLen + 1), "what_failed": "x", "lesson": "y"}, []string{"invalid id", "at most 12"}},
		{"replay", map[string]any{"id": "'cp0001'"}, []string{"invalid id", "without quotes"}},
		{"guard_effect", map[string]any{}, []string{"key"}},
		{"guard_effect", map[string]any{"key": ""}, []string{"invalid key", "required", "stably"}},
		{"guard_effect", map[string]any{"key": long(mcpserver.MaxKeyLen + 1)}, []string{"invalid key", "at most 256"}},
		{"guard_effect", map[string]any{"key": "a\tb"}, []string{"invalid key", "control character"}},
		{"guard_effect", map[string]any{"key": "k", "payload": "not an object"}, []string{"payload"}},
		{"guard_effect", map[string]any{"key": "k", "payload": []int{1}}, []string{"payload"}},
		{"guard_effect", map[string]any{"key": "k", "payload": map[string]any{"blob": long(mcpserver.MaxPayloadBytes)}}, []string{"invalid payload", "bytes of JSON"}},
		{"guard_effect", map[string]any{"key": "k", "description": long(mcpserver.MaxDescriptionLen + 1)}, []string{"invalid description"}},
		{"backtrack_commit", map[string]any{"id": "cp0001"}, []string{"what_failed"}},
		{"backtrack_commit", map[string]any{"id": "cp0001", "what_failed": ""}, []string{"invalid what_failed", "how it failed"}},
		{"backtrack_commit", map[string]any{"id": "cp0001", "what_failed": long(mcpserver.MaxNoteLen + 1)}, []string{"invalid what_failed", "summarise"}},
		{"backtrack_commit", map[string]any{"id": "cp0001", "what_failed": "x", "lesson": "bell\a"}, []string{"invalid lesson"}},
		{"backtrack_commit", map[string]any{"id": "no way", "what_failed": "x"}, []string{"invalid id"}},
	}
	ws := newStub()
	cs := connect(t, ws, mcpserver.ProfileAll)
	for _, c := range cases {
		text := callErr(t, cs, c.tool, c.args)
		mustContain(t, c.tool+" error", text, c.want...)
		if len(text) > 400 {
			t.Errorf("%s error is %d bytes; a long value must be shortened: %s", c.tool, len(text), text)
		}
	}
	if ws.calls != 0 {
		t.Errorf("the Workspace was called %d times with invalid input", ws.calls)
	}

	// Multi-line notes are fine: what failed is often a log excerpt.
	var bc mcpserver.BacktrackResult
	ws.Workspace.Checkpoint(t.Context(), "")
	callOK(t, cs, "backtrack_commit", map[string]any{"id": "cp0001", "what_failed": "test failed:\n\tpanic: nil map"}, &bc)
}

// TestCaps checks that big Workspace answers are cut to the caps, with the cut reported, and that
// nil lists become empty ones.
func TestCaps(t *testing.T) {
	ws := newStub()
	var paths []string
	for i := range 100 {
		paths = append(paths, "dir/file"+strings.Repeat("x", i%3))
	}
	ws.rewind = func(id string) (mcpserver.RestoreResult, error) {
		return mcpserver.RestoreResult{ID: id, SafetyID: "s1", Added: 100, Paths: paths}, nil
	}
	ws.list = func() (mcpserver.ListResult, error) {
		r := mcpserver.ListResult{Current: "c"}
		for range mcpserver.MaxListEntries + 7 {
			r.Entries = append(r.Entries, mcpserver.TimelineEntry{ID: "c", Kind: mcpserver.KindCheckpoint})
		}
		for i := range mcpserver.MaxListCalls + 5 {
			r.Calls = append(r.Calls, mcpserver.CallStep{ID: fmt.Sprintf("call%02d", i), Session: fmt.Sprint("s", i%2), Checkpoint: "c"})
		}
		return r, nil
	}
	var notes []mcpserver.FailureNote
	for i := range 30 {
		notes = append(notes, mcpserver.FailureNote{WhatFailed: string(rune('a' + i%26))})
	}
	ws.cands = func() (mcpserver.CandidatesResult, error) {
		var r mcpserver.CandidatesResult
		for range mcpserver.MaxCandidates + 3 {
			r.Candidates = append(r.Candidates, mcpserver.Candidate{ID: "c", Time: testNow.Add(5e9), Notes: notes}) // in the future: age 0
		}
		return r, nil
	}
	ws.commit = func(req mcpserver.BacktrackRequest) (mcpserver.BacktrackResult, error) {
		return mcpserver.BacktrackResult{Notes: notes, Rewind: mcpserver.RestoreResult{ID: req.ID}}, nil
	}
	cs := connect(t, ws, mcpserver.ProfileAll)

	var rw mcpserver.RestoreResult
	text := callOK(t, cs, "rewind", map[string]any{"id": "c"}, &rw)
	if len(rw.Paths) != mcpserver.MaxPaths || !rw.Truncated || rw.Added != 100 {
		t.Errorf("rewind: %d paths, truncated %v, added %d", len(rw.Paths), rw.Truncated, rw.Added)
	}
	mustContain(t, "rewind text", text, ", …")

	var ls mcpserver.ListResult
	text = callOK(t, cs, "list", nil, &ls)
	if len(ls.Entries) != mcpserver.MaxListEntries || !ls.Truncated {
		t.Errorf("list: %d entries, truncated %v", len(ls.Entries), ls.Truncated)
	}
	mustContain(t, "list text", text, "list with before c shows older entries", "left out")
	calls := 0
	for _, s := range ls.Sessions {
		calls += len(s.Calls)
	}
	if calls != mcpserver.MaxListCalls || len(ls.Sessions) != 2 || ls.Sessions[0].ID != "s0" || ls.Sessions[0].Calls[0].ID != "call00" {
		t.Errorf("list: %d calls in %+v, want the newest %d", calls, ls.Sessions, mcpserver.MaxListCalls)
	}

	var cands mcpserver.CandidatesResult
	callOK(t, cs, "backtrack_candidates", nil, &cands)
	if len(cands.Candidates) != mcpserver.MaxCandidates || !cands.Truncated {
		t.Errorf("candidates: %d, truncated %v", len(cands.Candidates), cands.Truncated)
	}
	for _, c := range cands.Candidates {
		if len(c.Notes) != mcpserver.MaxCandidateNotes || c.Notes[len(c.Notes)-1] != notes[len(notes)-1] || c.AgeSeconds != 0 {
			t.Fatalf("candidate: %d notes (want the newest %d), age %d", len(c.Notes), mcpserver.MaxCandidateNotes, c.AgeSeconds)
		}
	}

	var bc mcpserver.BacktrackResult
	callOK(t, cs, "backtrack_commit", map[string]any{"id": "c", "what_failed": "x"}, &bc)
	if len(bc.Notes) != mcpserver.MaxCommitNotes || bc.Notes[0] != notes[len(notes)-mcpserver.MaxCommitNotes] {
		t.Errorf("commit: %d notes, want the newest %d", len(bc.Notes), mcpserver.MaxCommitNotes)
	}
	if bc.Rewind.Paths == nil {
		t.Errorf("commit: rewind.paths is null, want []")
	}

	// Empty answers: lists are [], never null, and the savings note is never empty.
	empty := newStub()
	empty.list = func() (mcpserver.ListResult, error) { return mcpserver.ListResult{}, nil }
	empty.cands = func() (mcpserver.CandidatesResult, error) { return mcpserver.CandidatesResult{}, nil }
	empty.rewind = func(id string) (mcpserver.RestoreResult, error) { return mcpserver.RestoreResult{ID: id}, nil }
	empty.savings = func() (mcpserver.SavingsResult, error) { return mcpserver.SavingsResult{}, nil }
	cs = connect(t, empty, mcpserver.ProfileAll)
	for _, c := range []struct {
		tool, field string
		args        map[string]any
	}{
		{"list", "entries", nil},
		{"backtrack_candidates", "candidates", nil},
		{"rewind", "paths", map[string]any{"id": "x"}},
	} {
		res := call(t, cs, c.tool, c.args)
		m, _ := res.StructuredContent.(map[string]any)
		if v, ok := m[c.field].([]any); !ok || len(v) != 0 {
			t.Errorf("%s: %s = %#v, want []", c.tool, c.field, m[c.field])
		}
	}
	var sv mcpserver.SavingsResult
	callOK(t, cs, "savings", nil, &sv)
	if sv.Note != mcpserver.SavingsNote {
		t.Errorf("savings note = %q, want %q", sv.Note, mcpserver.SavingsNote)
	}
	mustContain(t, "empty list text", callOK(t, cs, "list", nil, &ls), "No checkpoints yet")
}

// TestToolsPerProfile checks that each profile lists exactly its tools.
func TestToolsPerProfile(t *testing.T) {
	want := map[mcpserver.Profile][]string{
		mcpserver.ProfileLean:      {"checkpoint", "guard_effect", "rewind"},
		mcpserver.ProfileRecovery:  {"backtrack_candidates", "backtrack_commit", "checkpoint", "guard_effect", "list", "replay", "rewind"},
		mcpserver.ProfileAnalytics: {"savings"},
		mcpserver.ProfileAll:       {"backtrack_candidates", "backtrack_commit", "checkpoint", "guard_effect", "list", "replay", "rewind", "savings"},
	}
	for _, p := range mcpserver.Profiles() {
		got := toolNames(t, connect(t, fakeworkspace.New(), p))
		slices.Sort(got)
		if diff := cmp.Diff(want[p], got); diff != "" {
			t.Errorf("profile %s tools (-want +got):\n%s", p, diff)
		}
		tools := p.Tools()
		slices.Sort(tools)
		if diff := cmp.Diff(want[p], tools); diff != "" {
			t.Errorf("Profile(%s).Tools() (-want +got):\n%s", p, diff)
		}
	}
}

// TestHiddenTools checks that a tool outside the profile cannot be called, and that the error
// says which profile has it. The Workspace is never reached.
func TestHiddenTools(t *testing.T) {
	all := mcpserver.ProfileAll.Tools()
	for _, p := range mcpserver.Profiles() {
		ws := newStub()
		cs := connect(t, ws, p)
		for _, tool := range all {
			if p.Has(tool) {
				continue
			}
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"id": "cp0001", "what_failed": "x", "key": "k"}})
			if err == nil {
				t.Errorf("profile %s: calling hidden tool %s succeeded", p, tool)
				continue
			}
			mustContain(t, "hidden-tool error", err.Error(), "not enabled in MCP profile \""+string(p)+"\"", "--profile", mcpserver.EnvProfile)
		}
		if ws.calls != 0 {
			t.Errorf("profile %s: hidden calls reached the Workspace %d times", p, ws.calls)
		}
	}
	// A name that is no tool at all gets the SDK's own answer.
	cs := connect(t, fakeworkspace.New(), mcpserver.ProfileAll)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "release"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("calling a tool that does not exist: err = %v", err)
	}
}

// TestRewindInUse: paths a rewind left alone because they were in use reach the agent, in the
// result and in the text, with what to do.
func TestRewindInUse(t *testing.T) {
	ws := newStub()
	ws.rewind = func(id string) (mcpserver.RestoreResult, error) {
		return mcpserver.RestoreResult{ID: id, SafetyID: "s1", Modified: 1, Paths: []string{"a.txt"}, InUse: []string{"server.log"}}, nil
	}
	cs := connect(t, ws, mcpserver.ProfileAll)
	var rw mcpserver.RestoreResult
	text := callOK(t, cs, "rewind", map[string]any{"id": "cp0001"}, &rw)
	if !slices.Equal(rw.InUse, []string{"server.log"}) {
		t.Fatalf("in_use = %v", rw.InUse)
	}
	mustContain(t, "rewind text", text, "in use", "server.log", "rewind cp0001 again restores in_use once nothing writes to them", "rewind s1 undoes this")
	if rw.Next != "rewind cp0001 again restores in_use once nothing writes to them; rewind s1 undoes this" {
		t.Errorf("next = %q", rw.Next)
	}
}

// TestRewindConversation: the conversation option reaches the workspace, and the command that
// resumes the fork reaches the model in next (the session that called keeps its memory, so
// the user must run it); without the option nothing of it.
func TestRewindConversation(t *testing.T) {
	ws := newStub()
	var got []mcpserver.RewindRequest
	ws.rewind = func(id string) (mcpserver.RestoreResult, error) {
		return mcpserver.RestoreResult{ID: id, SafetyID: "s1"}, nil
	}
	ws.rewindReq = func(req mcpserver.RewindRequest) { got = append(got, req) }
	cs := connect(t, ws, mcpserver.ProfileLean)
	var rw mcpserver.RestoreResult
	callOK(t, cs, "rewind", map[string]any{"id": "toolu_1", "conversation": true}, &rw)
	callOK(t, cs, "rewind", map[string]any{"id": "toolu_1"}, &rw)
	if want := []mcpserver.RewindRequest{{ID: "toolu_1", Conversation: true}, {ID: "toolu_1"}}; !slices.Equal(got, want) {
		t.Errorf("the workspace got %+v, want %+v", got, want)
	}
	if strings.Contains(rw.Next, "resume") {
		t.Errorf("next without the option: %q", rw.Next)
	}
	real := newStub()
	cs = connect(t, real, mcpserver.ProfileLean)
	var cp mcpserver.CheckpointResult
	callOK(t, cs, "checkpoint", map[string]any{}, &cp)
	text := callOK(t, cs, "rewind", map[string]any{"id": cp.ID, "conversation": true}, &rw)
	mustContain(t, "rewind text", text, "tell the user to continue in the fork with: claude --resume fake-fork-of-"+cp.ID)
	if !strings.Contains(rw.Next, "claude --resume fake-fork-of-"+cp.ID) {
		t.Errorf("next = %q, want the resume command", rw.Next)
	}
}
