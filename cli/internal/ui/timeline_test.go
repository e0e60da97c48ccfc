package ui

import (
	"slices"
	"testing"
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
