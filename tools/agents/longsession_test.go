package agents

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// TestClaudeCodeLongSession plays a Claude Code 2.1.328 session of 30 tool calls in a project
// of 2,000 files (edits by Bash, reads by Bash and Read, Write and Edit calls) and logs each
// hook call's wall time and the distribution per event: the figures of issue 29 (median,
// mean, p90, max, and where the outliers are), never asserted. It checks only that the
// session ran and its checkpoints were taken.
func TestClaudeCodeLongSession(t *testing.T) {
	e := New(t)
	fillProject(e)
	times := timeHooks(t, e)
	src := func(d, f int) string {
		return filepath.Join(e.Project, "src", fmt.Sprintf("d%02d", d), fmt.Sprintf("f%02d.go", f))
	}
	var steps []mockmodel.Step
	for i := range 6 {
		steps = append(steps,
			bash(fmt.Sprintf("printf 'x%d\\n' >> src/d%02d/f%02d.go", i, i, i)),
			mockmodel.Call(map[string]string{"file_path": src(i+10, i)}, "Read"),
			bash(fmt.Sprintf("grep -c package src/d%02d/*.go | tail -1", i+20)),
			mockmodel.Call(map[string]string{"file_path": filepath.Join(e.Project, "notes", fmt.Sprintf("n%d.md", i)), "content": fmt.Sprintf("# note %d\n", i)}, "Write"),
			mockmodel.Call(map[string]string{"file_path": src(i+10, i), "old_string": fmt.Sprintf("// %d\n", i), "new_string": fmt.Sprintf("// %d edited\n", i)}, "Edit"),
		)
	}
	m := e.Model(mockmodel.Sequence("done", steps...))
	e.Claude(m, e.Project, true, "a long session of edits and reads")
	if calls := m.Calls(); len(calls) != len(steps) {
		t.Fatalf("the model made %d calls, want the script's %d", len(calls), len(steps))
	}
	if l := e.List(e.Project); len(l.Labels("auto")) == 0 {
		t.Errorf("the store's checkpoints %+v: want automatic ones before the changes", l.Checkpoints)
	}
	logHookCalls(t, hookCalls(t, times))
}
