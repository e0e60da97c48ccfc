package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What the sessions of several clients share: the steps' commands and the checks of what the
// model read and of the project's files.

// The steps the sessions play.
const (
	bumpVersion     = "printf 'version 2\\n' > app.txt"
	pushMain        = "git push -q origin HEAD:main"
	labelBeforeBump = "before the version bump"
)

var customerEmail = map[string]any{"to": "ann@example.com", "subject": "Your refund", "body": "It is on its way."}

// checkpointIDOf reads the checkpoint id from what the model read of an MCP checkpoint:
// Codex hands it the structured result as JSON after "Output:", Cline the whole result
// (content and structuredContent) as JSON.
func checkpointIDOf(t *testing.T, text string) string {
	t.Helper()
	body := text
	if _, after, ok := strings.Cut(text, "Output:"); ok {
		body = strings.TrimSpace(after)
	}
	var out struct {
		ID         string `json:"id"`
		Structured struct {
			ID string `json:"id"`
		} `json:"structuredContent"`
	}
	_ = json.Unmarshal([]byte(body), &out)
	if out.ID == "" {
		out.ID = out.Structured.ID
	}
	if out.ID == "" {
		t.Fatalf("no checkpoint id in what the model read of checkpoint: %q", text)
	}
	return out.ID
}

func hasCheckpoint(l List, id string) bool {
	for _, c := range l.Checkpoints {
		if c.ID == id {
			return true
		}
	}
	return false
}

// otherStores lists the stores in the Env's state folder and in the default one (where an
// MCP server that did not get XDG_STATE_HOME writes).
func otherStores(e *Env) []string {
	var out []string
	for _, d := range []string{filepath.Join(e.Home, ".local", "state", "agent-rewind"), e.State} {
		entries, _ := os.ReadDir(filepath.Join(d, "stores"))
		for _, en := range entries {
			out = append(out, filepath.Join(d, "stores", en.Name()))
		}
	}
	return out
}

// sameTree checks that the files right after call `after` ran are those before call
// `before`.
func sameTree(t *testing.T, m *Model, before, after, what string) {
	t.Helper()
	want, err := m.Trees.Before(before)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Trees.After(after)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(want, got); len(d) > 0 {
		t.Errorf("%s: the files differ from before that call:\n%s", what, strings.Join(d, "\n"))
	}
}

// treeIs checks that the project's files now are those before call id.
func treeIs(t *testing.T, m *Model, id, what string) {
	t.Helper()
	want, err := m.Trees.Before(id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadTree(m.Trees.dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(want, got); len(d) > 0 {
		t.Errorf("%s: the files differ from before that call:\n%s", what, strings.Join(d, "\n"))
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(t *testing.T, s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// checkOneStore checks that the MCP checkpoint the model read of its call cpCall, and the
// hooks' automatic checkpoint before the call callID, are both in the project's store: the
// server and the hooks write to one.
func checkOneStore(t *testing.T, e *Env, m *Model, cpCall, callID string) {
	t.Helper()
	cpText, _ := m.Result(cpCall)
	l := e.List(e.Project)
	if id := checkpointIDOf(t, cpText.Text); !hasCheckpoint(l, id) {
		t.Errorf("the MCP server wrote its checkpoint %s to another store than the project's; other stores: %v", id, otherStores(e))
	}
	if _, ok := l.Call(callID); !ok {
		t.Errorf("the hooks took no automatic checkpoint before the call %s in the project's store: calls %+v", callID, l.Calls())
	}
}
