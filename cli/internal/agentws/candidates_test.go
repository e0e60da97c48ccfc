package agentws_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/snapshot"
)

func TestRankCandidates(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cp := func(id string, kind snapshot.Kind, minute int) snapshot.Checkpoint {
		return snapshot.Checkpoint{ID: id, Kind: kind, Time: t0.Add(time.Duration(minute) * time.Minute)}
	}
	in := []snapshot.Checkpoint{
		cp("aaaaaaaaaaa1", snapshot.KindNormal, 1),
		cp("aaaaaaaaaaa2", snapshot.KindNormal, 2),
		cp("aaaaaaaaaaa3", snapshot.KindSafety, 3),
		cp("aaaaaaaaaaa4", snapshot.KindNormal, 4),
		cp("aaaaaaaaaaa5", snapshot.KindSafety, 5),
		cp("aaaaaaaaaaa0", snapshot.KindNormal, 4), // same time as ...4: the id decides
		cp("aaaaaaaaaaa6", snapshot.KindAuto, 6),
		cp("aaaaaaaaaaa7", snapshot.KindAuto, 7),
	}
	notes := map[string][]agentws.Note{
		"aaaaaaaaaaa4": {{}, {}},
		"aaaaaaaaaaa2": {{}},
		"aaaaaaaaaaa5": {{}},
	}
	var got []string
	for _, c := range agentws.RankCandidates(in, notes) {
		got = append(got, c.ID[11:])
	}
	// normal before automatic before safety; fewer notes first; newer first; id.
	if want := []string{"0", "1", "2", "4", "7", "6", "3", "5"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if in[0].ID != "aaaaaaaaaaa1" {
		t.Fatal("RankCandidates reordered its input")
	}
}

// TestCountChangesIsDiff checks CountChanges against the store's own Diff on real checkpoints
// that differ in every way a path can: added, deleted, content, mode, type, symlink target.
func TestCountChangesIsDiff(t *testing.T) {
	w, root := newWorkspace(t, map[string]string{"same": "s", "edit": "1", "chmod": "c", "gone": "g", "typed": "t", "sub/f": "f"})
	os.Symlink("same", filepath.Join(root, "link"))
	ctx := t.Context()
	a, err := w.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "edit", "2")
	os.Chmod(filepath.Join(root, "chmod"), 0o444) // the write bit: Windows keeps it too
	os.Remove(filepath.Join(root, "gone"))
	os.Remove(filepath.Join(root, "typed"))
	os.Mkdir(filepath.Join(root, "typed"), 0o755)
	os.Remove(filepath.Join(root, "link"))
	os.Symlink("edit", filepath.Join(root, "link"))
	write(t, root, "added/x", "x")
	b, err := w.Checkpoint(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Open(root, snapshot.Options{StateDir: store(t, root)})
	if err != nil {
		t.Fatal(err)
	}
	ea, _ := s.Entries(a.ID)
	eb, _ := s.Entries(b.ID)
	entries := map[string][]snapshot.Entry{a.ID: ea, b.ID: eb}
	for _, pair := range [][2]string{{a.ID, b.ID}, {b.ID, a.ID}, {a.ID, a.ID}} {
		d, err := s.Diff(ctx, pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := agentws.CountChanges(entries[pair[0]], entries[pair[1]]); got != int64(len(d.Changes)) {
			t.Errorf("CountChanges(%s, %s) = %d, Diff has %d: %+v", pair[0], pair[1], got, len(d.Changes), d.Changes)
		}
	}
	want := int64(7) // edit, chmod, gone, typed, link, added, added/x
	if _, err := os.Lstat(filepath.Join(root, "link")); err != nil {
		want-- // no symlinks here (Windows without the privilege; Wine 8 makes one it cannot find)
	}
	if n := agentws.CountChanges(ea, eb); n != want {
		t.Errorf("CountChanges = %d, want %d", n, want)
	}
}

func TestBacktrackCandidates(t *testing.T) {
	w, root := newWorkspace(t, map[string]string{"a": "1"})
	ctx := t.Context()
	first, err := w.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "a", "2")
	write(t, root, "b", "2")
	second, err := w.Checkpoint(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "c", "3")
	commit, err := w.BacktrackCommit(ctx, mcpserver.BacktrackRequest{ID: second.ID, WhatFailed: "adding c broke it", Lesson: "do not add c"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.BacktrackCandidates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range r.Candidates {
		ids = append(ids, c.ID)
	}
	// first (no notes) before second (one note); the safety checkpoint last.
	if want := []string{first.ID, second.ID, commit.Rewind.SafetyID}; !slices.Equal(ids, want) || r.Truncated {
		t.Fatalf("candidates %v, want %v (truncated %v)", ids, want, r.Truncated)
	}
	c0, c1, c2 := r.Candidates[0], r.Candidates[1], r.Candidates[2]
	if c0.Label != "first" || c0.Changed != 2 || len(c0.Notes) != 0 || c0.Notes == nil || !c0.Time.Equal(first.Time) {
		t.Errorf("first: %+v", c0)
	}
	if c1.Changed != 0 || len(c1.Notes) != 1 || c1.Notes[0].WhatFailed != "adding c broke it" || c1.Notes[0].Lesson != "do not add c" {
		t.Errorf("second (current): %+v", c1)
	}
	if c2.Changed != 1 || c2.Label != "before rewind to "+second.ID {
		t.Errorf("safety: %+v", c2)
	}
}

func TestBacktrackCandidatesTruncated(t *testing.T) {
	w, root := newWorkspace(t, nil)
	ctx := t.Context()
	var last mcpserver.CheckpointResult
	for i := range mcpserver.MaxCandidates + 2 {
		write(t, root, "f", string(rune('a'+i)))
		var err error
		if last, err = w.Checkpoint(ctx, ""); err != nil {
			t.Fatal(err)
		}
	}
	r, err := w.BacktrackCandidates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != mcpserver.MaxCandidates || !r.Truncated || r.Candidates[0].ID != last.ID || r.Candidates[1].Changed != 1 {
		t.Fatalf("candidates %+v", r)
	}
}

func TestBacktrackCommit(t *testing.T) {
	w, root := newWorkspace(t, map[string]string{"app.go": "v1"})
	ctx := t.Context()
	cp, err := w.Checkpoint(ctx, "green")
	if err != nil {
		t.Fatal(err)
	}

	// An unknown id records nothing.
	chainBefore := len(chainEntries(t, root))
	_, err = w.BacktrackCommit(ctx, mcpserver.BacktrackRequest{ID: "ffffffffffff", WhatFailed: "x"})
	if !errors.Is(err, mcpserver.ErrUnknownCheckpoint) {
		t.Fatalf("unknown id: %v", err)
	}
	if exists(store(t, root), agentws.MemoryFile) || len(chainEntries(t, root)) != chainBefore {
		t.Fatal("a commit to an unknown id recorded something")
	}

	write(t, root, "app.go", "v2 broken")
	r1, err := w.BacktrackCommit(ctx, mcpserver.BacktrackRequest{ID: cp.ID[:8], WhatFailed: "v2 broke the build", Lesson: "run go vet"})
	if err != nil {
		t.Fatal(err)
	}
	if read(t, root, "app.go") != "v1" || r1.Rewind.ID != cp.ID || r1.Rewind.Modified != 1 || r1.Rewind.SafetyID == "" {
		t.Fatalf("commit 1: %+v", r1)
	}
	if len(r1.Notes) != 1 || r1.Notes[0].WhatFailed != "v2 broke the build" || r1.Notes[0].Lesson != "run go vet" {
		t.Fatalf("commit 1 notes: %+v", r1.Notes)
	}

	// Another checkpoint's note is not returned with this one's.
	other, err := w.Checkpoint(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.BacktrackCommit(ctx, mcpserver.BacktrackRequest{ID: other.ID, WhatFailed: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	write(t, root, "app.go", "v3 broken")
	r2, err := w.BacktrackCommit(ctx, mcpserver.BacktrackRequest{ID: cp.ID, WhatFailed: "v3 broke it too"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Notes) != 2 || r2.Notes[0].WhatFailed != "v2 broke the build" || r2.Notes[1].WhatFailed != "v3 broke it too" {
		t.Fatalf("commit 2 notes: %+v", r2.Notes)
	}

	// Notes survive any rewind: the store is never restored.
	if _, err := w.Rewind(ctx, mcpserver.RewindRequest{ID: r1.Rewind.SafetyID}); err != nil {
		t.Fatal(err)
	}
	c, err := w.BacktrackCandidates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range c.Candidates {
		if x.ID == cp.ID && len(x.Notes) == 2 {
			if got := kinds(t, root); got[agentws.KindMemory] != 3 {
				t.Fatalf("chain kinds %v", got)
			}
			return
		}
	}
	t.Fatalf("notes lost after a rewind: %+v", c)
}
