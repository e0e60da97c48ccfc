package agents

import (
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// TestClaudeCodePlugin plays one session of Claude Code with the plugin loaded, started at the
// project's root.
func TestClaudeCodePlugin(t *testing.T) {
	e := New(t)
	m := e.Model(mockmodel.Sequence("done",
		mockmodel.Call(map[string]any{"command": "printf 'version 2\\n' > app.txt", "description": "bump the version"}, "Bash"),
	))
	s := e.Claude(m, e.Project, true, "bump the version")
	if got := e.ReadFile(e.Project + "/app.txt"); got != "version 2\n" {
		t.Errorf("app.txt = %q after the session", got)
	}
	l := e.List(e.Project)
	for _, c := range m.CallsTo("Bash") {
		if _, ok := l.Call(c.ID); !ok {
			t.Errorf("the model's Bash call %s has no automatic checkpoint: list has %+v", c.ID, l.Calls())
		}
	}
	if refused := m.Refused(); len(refused) > 0 {
		t.Errorf("Claude Code called something the mock does not serve:\n%s", strings.Join(refused, "\n"))
	}
	t.Logf("session %s in %v", s.SessionID, s.Wall)
}
