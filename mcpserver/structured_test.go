package mcpserver_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
)

// textIDs are the ids the fake workspace and the hooks mint, as they appear in text forms.
var textIDs = regexp.MustCompile(`\b(cp\d{4}|toolu_\w+|call_\w+)\b`)

// textQuoted are the quoted strings of a text form: labels, keys, session ids, paths.
var textQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// TestStructuredCarriesTheText: Claude Code and Codex CLI hand the model a tool's
// structuredContent, not its text, so whatever the text tells an agent must be in the
// structured result too: every id, every quoted label, key or session, and the next step.
// Each tool is called as a session with automatic checkpoints would call it.
func TestStructuredCarriesTheText(t *testing.T) {
	ws := fakeworkspace.New()
	ws.AutoCheckpoint("session-a", "toolu_01", "Bash: npm install")
	ws.AutoCheckpoint("session-b", "call_x1", "shell: go generate ./...")
	ws.AutoCheckpoint("session-a", "toolu_02", "Edit: src/main.go")
	cs := connect(t, ws, mcpserver.ProfileAll)
	guard := map[string]any{"key": "deploy:prod:v7", "payload": map[string]any{"v": 7}}
	calls := []struct {
		tool string
		args map[string]any
		next string // what the text says the next step is ("" when the result has no next)
	}{
		{"checkpoint", map[string]any{"label": "before the migration"}, "rewind cp0004 restores this state"},
		{"list", nil, "rewind with an entry's id restores that checkpoint, with a call's id the state before that tool call"},
		{"list", map[string]any{"limit": 2}, "list with before cp0003 shows older entries"},
		{"rewind", map[string]any{"id": "toolu_01"}, "rewind cp0005 undoes this"},
		{"replay", map[string]any{"id": "cp0005"}, "rewind cp0006 undoes this"},
		{"guard_effect", guard, "perform it once now"},
		{"guard_effect", guard, "do NOT perform"}, // the text: do NOT perform effect "KEY"
		{"backtrack_candidates", nil, ""},
		{"backtrack_commit", map[string]any{"id": "cp0004", "what_failed": "the migration dropped a column"}, ""},
		{"savings", nil, ""},
	}
	for _, c := range calls {
		res := call(t, cs, c.tool, c.args)
		text := resultText(t, res)
		if res.IsError {
			t.Fatalf("%s: %s", c.tool, text)
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		structured := string(b)
		var values []string // every string in the structured result, decoded
		collectStrings(res.StructuredContent, &values)
		all := strings.Join(values, "\n")
		for _, id := range textIDs.FindAllString(text, -1) {
			if !strings.Contains(all, id) {
				t.Errorf("%s: the text names %s, the structured result does not:\ntext: %s\nstructured: %s", c.tool, id, text, structured)
			}
		}
		for _, q := range textQuoted.FindAllString(text, -1) {
			s, err := strconv.Unquote(q)
			if err != nil {
				t.Fatalf("%s: text quotes %s: %v", c.tool, q, err)
			}
			if !strings.Contains(all, s) {
				t.Errorf("%s: the text quotes %q, the structured result does not hold it:\n%s", c.tool, s, structured)
			}
		}
		m, _ := res.StructuredContent.(map[string]any)
		next, has := m["next"].(string)
		if has != (c.next != "") || !strings.Contains(next, c.next) || !strings.Contains(text, c.next) {
			t.Errorf("%s: next %q (present %v), want one that says %q as the text does:\n%s", c.tool, next, has, c.next, text)
		}
	}
}

// collectStrings appends every string value in v (decoded JSON) to out.
func collectStrings(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case []any:
		for _, x := range v {
			collectStrings(x, out)
		}
	case map[string]any:
		for _, x := range v {
			collectStrings(x, out)
		}
	}
}

// TestListSessions: list groups the tool calls by session, the session with the newest call
// first, each session's calls newest first, and gives them on the first page only.
func TestListSessions(t *testing.T) {
	ws := fakeworkspace.New()
	cpA1 := ws.AutoCheckpoint("a", "toolu_a1", "Bash: make")
	ws.AutoCheckpoint("b", "toolu_b1", "Write: x.go")
	cpA2 := ws.AutoCheckpoint("a", "toolu_a2", "Bash: go test")
	cs := connect(t, ws, mcpserver.ProfileAll)
	var ls mcpserver.ListResult
	callOK(t, cs, "list", map[string]any{"limit": 1}, &ls)
	if len(ls.Sessions) != 2 || ls.Sessions[0].ID != "a" || ls.Sessions[1].ID != "b" {
		t.Fatalf("sessions = %+v, want a (newest call) then b", ls.Sessions)
	}
	a := ls.Sessions[0].Calls
	if len(a) != 2 || a[0].ID != "toolu_a2" || a[0].Checkpoint != cpA2 || a[0].Label != "Bash: go test" || a[1].ID != "toolu_a1" || a[1].Checkpoint != cpA1 {
		t.Fatalf("session a's calls = %+v", a)
	}
	mustContain(t, "next", ls.Next, "with a call's id the state before that tool call", "list with before "+ls.Older)
	var page2 mcpserver.ListResult
	callOK(t, cs, "list", map[string]any{"before": ls.Older}, &page2)
	if len(page2.Sessions) != 0 || page2.Sessions == nil || len(page2.Entries) != 2 {
		t.Fatalf("second page: %+v, want its entries and no sessions (the first page has them)", page2)
	}
	var rw mcpserver.RestoreResult
	callOK(t, cs, "rewind", map[string]any{"id": "toolu_b1"}, &rw)
	if rw.ID != "cp0002" {
		t.Fatalf("rewind toolu_b1 restored %s, want the checkpoint before it, cp0002", rw.ID)
	}
}

// TestNextNamesProfileTools: every next step names only tools the profile exposes: lean has no
// list or replay.
func TestNextNamesProfileTools(t *testing.T) {
	cs := connect(t, fakeworkspace.New(), mcpserver.ProfileLean)
	var cp mcpserver.CheckpointResult
	callOK(t, cs, "checkpoint", nil, &cp)
	var rw mcpserver.RestoreResult
	callOK(t, cs, "rewind", map[string]any{"id": cp.ID}, &rw)
	var g mcpserver.GuardResult
	callOK(t, cs, "guard_effect", map[string]any{"key": "k"}, &g)
	for _, next := range []string{cp.Next, rw.Next, g.Next} {
		for _, tool := range []string{"list", "replay", "backtrack"} {
			if strings.Contains(next, tool) {
				t.Errorf("lean next %q names %s", next, tool)
			}
		}
	}
	if cp.Next != "rewind "+cp.ID+" restores this state" || rw.Next != "rewind "+rw.SafetyID+" undoes this" || g.Next != "perform it once now" {
		t.Errorf("next steps: %q, %q, %q", cp.Next, rw.Next, g.Next)
	}
	res := call(t, cs, "guard_effect", map[string]any{"key": "k"})
	if m, _ := res.StructuredContent.(map[string]any); m["next"] != "do NOT perform it" {
		t.Errorf("refusal next = %v", m["next"])
	}
}
