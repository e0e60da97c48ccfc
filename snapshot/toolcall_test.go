package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAutoCheckpointReusesAndResolvesCalls: a call after a change writes a checkpoint labelled
// with the call; a call after no change writes none, yet its id resolves to the state before it.
func TestAutoCheckpointReusesAndResolvesCalls(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	put(t, root, "a.txt", "one", 0o644)
	c1, err := s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_1", Tool: "Write", Summary: "a.txt", Session: "s1", Agent: "claude-code"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c1.Reused || c1.Kind != KindAuto || c1.Call == nil || c1.Call.ID != "toolu_1" || c1.Label != "Write: a.txt" {
		t.Fatalf("first automatic checkpoint: %+v", c1)
	}
	c2, err := s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_2", Tool: "Bash", Summary: "ls  -la\n", Session: "s1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c2.Reused || c2.ID != c1.ID {
		t.Fatalf("nothing changed, yet: reused %v, id %s (want %s)", c2.Reused, c2.ID, c1.ID)
	}
	put(t, root, "a.txt", "two", 0o644)
	c3, err := s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_3", Tool: "Edit", Summary: "a.txt", Session: "s2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c3.Reused || c3.Parent != c1.ID {
		t.Fatalf("after a change: %+v", c3)
	}
	for ref, want := range map[string]string{"toolu_1": c1.ID, "toolu_2": c1.ID, "toolu_3": c3.ID, c3.ID[:6]: c3.ID} {
		if got, err := s.Resolve(ref); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	if _, err := s.Resolve("toolu_9"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "tool call") {
		t.Errorf("unknown call: %v", err)
	}
	// Rewinding to before call 3 restores "one".
	if _, err := s.Rewind(ctx, "toolu_3", RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "two" {
		t.Fatalf("before toolu_3 a.txt was %q, got %q", "two", b)
	}
	if _, err := s.Rewind(ctx, "toolu_2", RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "one" {
		t.Fatalf("before toolu_2 a.txt was %q, got %q", "one", b)
	}
	tl, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Sessions) != 2 || tl.Sessions[0].ID != "s1" || len(tl.Sessions[0].Calls) != 2 || tl.Sessions[1].ID != "s2" {
		t.Fatalf("sessions: %+v", tl.Sessions)
	}
	if got := tl.Sessions[0].Calls[1]; got.ID != "toolu_2" || !got.Reused || got.Summary != "ls -la" {
		t.Fatalf("second call: %+v", got)
	}
	// The same call twice in a row (a hook configured twice) is noted once.
	for range 2 {
		if _, err := s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_4", Tool: "Bash", Session: "s2"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if recs, err := s.readCalls(); err != nil || len(recs) != 4 || recs[3].ID != "toolu_4" {
		t.Fatalf("calls after a repeated call: %+v, %v", recs, err)
	}
}

// TestAutoCheckpointUnchangedWritesNothing: an automatic checkpoint whose watcher hint says
// nothing changed lists no store folder to clean (the hook's hot path); what interrupted writers
// left is cleaned by the next one that writes.
func TestAutoCheckpointUnchangedWritesNothing(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	put(t, root, "a.txt", "one", 0o644)
	c1, err := s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_1", Tool: "Bash"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	leftovers := []string{filepath.Join(s.StateDir(), "objects", "tmp", "obj-123"), filepath.Join(s.StateDir(), "packs", ".tmp-123")}
	for _, f := range leftovers {
		if err := os.WriteFile(f, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c2, err := s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_2", Tool: "Bash"}, &Changed{Since: c1.ID})
	if err != nil || !c2.Reused || c2.ID != c1.ID {
		t.Fatalf("unchanged, with a hint: %+v, %v", c2, err)
	}
	for _, f := range leftovers {
		if _, err := os.Lstat(f); err != nil {
			t.Fatalf("an unchanged automatic checkpoint cleaned %s: %v", f, err)
		}
	}
	put(t, root, "a.txt", "two", 0o644)
	c3, err := s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_3", Tool: "Bash"}, &Changed{Since: c1.ID, Paths: []string{"a.txt"}})
	if err != nil || c3.Reused {
		t.Fatalf("changed, with a hint: %+v, %v", c3, err)
	}
	for _, f := range leftovers {
		if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a writing automatic checkpoint left %s: %v", f, err)
		}
	}
	if got, err := s.Resolve("toolu_2"); err != nil || got != c1.ID {
		t.Errorf("Resolve(toolu_2) = %q, %v; want %s", got, err, c1.ID)
	}
}

// refusingRecorder is a Recorder whose every record fails.
type refusingRecorder struct{}

func (refusingRecorder) Record(string, any) (int64, error) { return 0, errors.New("chain unwritable") }

// TestAutoCheckpointNotedWhenNotRecorded: a new automatic checkpoint's call is noted (once) in
// the calls log even when the chain cannot record the checkpoint, which is reported.
func TestAutoCheckpointNotedWhenNotRecorded(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{Recorder: refusingRecorder{}})
	put(t, root, "a.txt", "one", 0o644)
	res, err := s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_1", Tool: "Bash"}, nil)
	if !errors.Is(err, ErrNotRecorded) || res == nil || res.Reused {
		t.Fatalf("AutoCheckpoint with an unwritable chain: %+v, %v; want a new checkpoint and ErrNotRecorded", res, err)
	}
	recs, err := s.readCalls()
	if err != nil || len(recs) != 1 || recs[0].ID != "toolu_1" || recs[0].Checkpoint != res.ID || recs[0].Reused {
		t.Fatalf("calls log: %+v, %v; want toolu_1 once, at %s", recs, err, res.ID)
	}
}

func TestAutoCheckpointRefusesBadCalls(t *testing.T) {
	s := mustOpen(t, t.TempDir(), Options{})
	for _, c := range []ToolCall{{Tool: "Bash"}, {ID: "x"}, {ID: "a\nb", Tool: "Bash"}, {ID: strings.Repeat("x", 300), Tool: "Bash"}} {
		if _, err := s.AutoCheckpoint(ctx, c, nil); !errors.Is(err, ErrBadToolCall) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	c, err := s.AutoCheckpoint(ctx, ToolCall{ID: "t", Tool: "Bash", Summary: strings.Repeat("é", 200)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Call.Summary) > maxCallSummary || !strings.HasSuffix(c.Call.Summary, "…") {
		t.Fatalf("summary not shortened: %d bytes", len(c.Call.Summary))
	}
}

// TestCallsLogTornLine: a crash mid-append leaves a torn last line, which is skipped.
func TestCallsLogTornLine(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	c, err := s.AutoCheckpoint(ctx, ToolCall{ID: "t1", Tool: "Bash"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(s.StateDir(), callsFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"t2","tool":"Ba`)
	f.Close()
	if got, err := s.Resolve("t1"); err != nil || got != c.ID {
		t.Fatalf("Resolve after a torn line: %q, %v", got, err)
	}
	if tl, err := s.List(); err != nil || len(tl.Sessions) != 1 || len(tl.Sessions[0].Calls) != 1 {
		t.Fatalf("List after a torn line: %+v, %v", tl, err)
	}
}

func TestDecodeAutoNeedsCall(t *testing.T) {
	for _, c := range []Checkpoint{{Kind: KindAuto}, {Kind: KindNormal, Call: &ToolCall{ID: "x", Tool: "Bash"}}} {
		b, id := encodeCheckpoint(&c)
		if _, err := decodeCheckpoint(id, b); err == nil {
			t.Errorf("kind %s with call %v decoded", c.Kind, c.Call)
		}
	}
}

// TestGCAutoRetention: automatic checkpoints beyond the newest N of their session go; manual
// ones and the current position stay, and the calls log forgets the removed ones' calls.
func TestGCAutoRetention(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	manual, err := s.Checkpoint(ctx, "manual")
	if err != nil {
		t.Fatal(err)
	}
	var auto []string
	for i, sess := range []string{"a", "a", "a", "b", "b"} {
		put(t, root, "f.txt", strings.Repeat("x", i+1), 0o644)
		c, err := s.AutoCheckpoint(ctx, ToolCall{ID: "call" + string(rune('0'+i)), Tool: "Bash", Session: sess}, nil)
		if err != nil {
			t.Fatal(err)
		}
		auto = append(auto, c.ID)
	}
	dry, err := s.GC(ctx, GCOptions{AutoKeepLast: 1, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{auto[0], auto[1], auto[3]}
	if !slices.Equal(dry.Removed, want) {
		t.Fatalf("dry run would remove %v, want %v", dry.Removed, want)
	}
	if _, err := s.Resolve("call0"); err != nil {
		t.Fatalf("dry run forgot a call: %v", err)
	}
	if _, err := s.GC(ctx, GCOptions{AutoKeepLast: 1}); err != nil {
		t.Fatal(err)
	}
	tl, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range tl.Checkpoints {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(ids, []string{manual.ID, auto[2], auto[4]}) {
		t.Fatalf("kept %v", ids)
	}
	recs, err := s.readCalls()
	if err != nil || len(recs) != 2 {
		t.Fatalf("calls log after gc: %+v, %v", recs, err)
	}
	if _, err := s.Resolve("call0"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("call of a removed checkpoint: %v", err)
	}
}
