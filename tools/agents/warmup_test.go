package agents

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// TestClaudeCodePromptWarmsUp plays a Claude Code 2.1.328 session in a project of 2,000 files
// whose store is new: its prompt hook (UserPromptSubmit) starts the guard server, which takes
// the first checkpoint and starts the change watcher after answering, so the session's first
// tool call reuses that checkpoint (noted under its id) instead of reading every file while the
// agent waits. It logs how long each hook call took, measured around agent-rewind-hook (a
// wrapper on PATH, which the plugin's launcher finds first): a figure, never asserted.
// warmLabel is cli/internal/hook.WarmLabel, as list shows it.
const warmLabel = "first checkpoint, taken at the session's first prompt"

func TestClaudeCodePromptWarmsUp(t *testing.T) {
	e := New(t)
	fillProject(e)
	times := timeHooks(t, e)
	m := e.Model(mockmodel.Sequence("done",
		bash("printf 'x\\n' >> src/d00/f00.go"),
		bash("ls src | head -1"),
		bash("printf 'y\\n' >> src/d01/f01.go"),
	))
	e.Claude(m, e.Project, true, "edit two files")
	calls := m.Calls()
	if len(calls) != 3 {
		t.Fatalf("the model made %d calls, want the script's 3", len(calls))
	}
	l := e.List(e.Project)
	if len(l.Checkpoints) == 0 || l.Checkpoints[0].Label != warmLabel {
		t.Fatalf("the store's checkpoints %+v: want the first labelled %q, taken at the prompt", l.Checkpoints, warmLabel)
	}
	c, ok := l.Call(calls[0].ID)
	if !ok || c.Checkpoint != l.Checkpoints[0].ID {
		t.Errorf("the first tool call %s: %+v (found %v), want it noted against the prompt's checkpoint %s", calls[0].ID, c, ok, l.Checkpoints[0].ID)
	}
	// Call 1's change is checkpointed before call 2 (ls), which changes nothing: call 3 reuses it.
	if got := l.Labels("auto"); len(got) != 1 || got[0] != "Bash: ls src | head -1" {
		t.Errorf("automatic checkpoints %q: want the one before the second call alone", got)
	}
	c2, _ := l.Call(calls[1].ID)
	if c3, _ := l.Call(calls[2].ID); c2.Checkpoint == "" || c2.Checkpoint == c.Checkpoint || c3.Checkpoint != c2.Checkpoint {
		t.Errorf("the second and third calls: %+v, %+v: want a new checkpoint before the second, reused by the third", c2, c3)
	}
	logHookCalls(t, hookCalls(t, times))
}

// fillProject writes 2,000 files in 40 folders of the project, src/dNN/fNN.go: the size of
// project issue 29's figures were taken in.
func fillProject(e *Env) {
	for d := range 40 {
		for f := range 50 {
			e.WriteFile(filepath.Join(e.Project, "src", fmt.Sprintf("d%02d", d), fmt.Sprintf("f%02d.go", f)), fmt.Sprintf("package d%02d // %d\n", d, f))
		}
	}
}
