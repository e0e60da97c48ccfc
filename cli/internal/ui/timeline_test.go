package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// A rewind to a and work from there opens a second lane; the safety checkpoint taken by the
// rewind continues the first.
func TestAssignLanesBranchesAfterRewind(t *testing.T) {
	steps := []Step{{ID: "a"}, {ID: "b", Parent: "a"}, {ID: "c", Parent: "a"}, {ID: "d", Parent: "c"}, {ID: "e", Parent: "b"}}
	if n := assignLanes(steps); n != 2 {
		t.Fatalf("lanes = %d, want 2", n)
	}
	var got []int
	for _, s := range steps {
		got = append(got, s.Lane)
	}
	if !slices.Equal(got, []int{0, 0, 1, 1, 0}) {
		t.Fatalf("lanes %v, want [0 0 1 1 0]", got)
	}
}

// Consecutive automatic checkpoints of one session fold into one group; another session, or a
// step that does not follow the group's last, starts a new one.
func TestGroupStepsBySession(t *testing.T) {
	steps := []Step{
		{ID: "m"},
		{ID: "a1", Parent: "m", Session: "s1", Tool: "Edit"},
		{ID: "a2", Parent: "a1", Session: "s1", Tool: "Bash"},
		{ID: "b1", Parent: "a2", Session: "s2", Tool: "Write"},
		{ID: "a3", Parent: "m", Session: "s1", Tool: "Edit"},
	}
	gs := groupSteps(steps)
	if len(gs) != 3 || !slices.Equal(gs[0].Steps, []string{"a1", "a2"}) || !slices.Equal(gs[0].Tools, []string{"Edit", "Bash"}) || gs[1].Session != "s2" || !slices.Equal(gs[2].Steps, []string{"a3"}) {
		t.Fatalf("groups %+v", gs)
	}
	if gs := groupSteps([]Step{{ID: "x"}}); gs == nil || len(gs) != 0 {
		t.Fatalf("no sessions: %+v, want an empty list", gs)
	}
}

// Only the newest maxSized checkpoints are sized, so a long history costs little per poll; the
// timeline handler answers them through a real store.
func TestTimelineSizesOnlyTheNewest(t *testing.T) {
	t.Setenv(workspace.StateDirEnv, t.TempDir())
	root := t.TempDir()
	ws, err := workspace.Init(root)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	srv, err := New(ws)
	if err != nil {
		t.Fatal(err)
	}
	for i, content := range []string{"one", "two", "three"} {
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.store.Checkpoint(context.Background(), fmt.Sprint("c", i)); err != nil {
			t.Fatal(err)
		}
	}
	defer func(n int) { maxSized = n }(maxSized)
	maxSized = 2
	rec := httptest.NewRecorder()
	srv.timeline(rec, httptest.NewRequest("GET", "/api/timeline", nil))
	var tl Timeline
	if err := json.Unmarshal(rec.Body.Bytes(), &tl); err != nil || len(tl.Steps) != 3 {
		t.Fatalf("timeline %s: %v", rec.Body, err)
	}
	if tl.Steps[0].Change != nil || tl.Steps[1].Change == nil || *tl.Steps[2].Change != (Change{Modified: 1}) {
		t.Fatalf("changes %v %v %v, want nil, then sized", tl.Steps[0].Change, tl.Steps[1].Change, tl.Steps[2].Change)
	}
}
