package hook

import (
	"testing"

	"github.com/agent-rewind/rewind/barrier"
)

// TestPromptOf: the prompt events of the clients whose facts name one, with the client,
// Codex's turn and the transcript the input names; every other input (a tool call's, another client's event) is not a prompt.
func TestPromptOf(t *testing.T) {
	for _, c := range []struct {
		in                string
		ok                bool
		agent, text, turn string
		transcript        string
	}{
		{`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"Add a login page","cwd":"/p","transcript_path":"/t"}`, true, "claude-code", "Add a login page", "", "/t"},
		{`{"hook_event_name":"UserPromptSubmit","session_id":"s","turn_id":"u1","prompt":"bump it","cwd":"/p","model":"m","transcript_path":"/r.jsonl"}`, true, "codex", "bump it", "u1", "/r.jsonl"},
		{`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":7}`, true, "claude-code", "", "", ""},
		{`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1","prompt":"x"}`, false, "", "", "", ""},
		{`{"hook_event_name":"BeforeAgent","session_id":"s","prompt":"hi","timestamp":"2026-12-02T00:00:00Z","transcript_path":"/g.jsonl"}`, true, "gemini-cli", "hi", "", "/g.jsonl"},
		{`{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"write_file","prompt":"hi","timestamp":"2026-12-02T00:00:00Z"}`, false, "", "", "", ""},
		{`{"key":"deploy","payload":{"prompt":"x"}}`, false, "", "", "", ""},
	} {
		raw := []byte(c.in)
		in, perr := barrier.ParseHookInput(raw)
		if perr != nil && in.Event == "" {
			in.Event = barrier.EventOf(raw)
		}
		p, ok := promptOf(in, raw)
		if ok != c.ok || ok && (p.Agent != c.agent || p.Text != c.text || p.Turn != c.turn || p.Transcript != c.transcript || p.Session != "s" || p.Time.IsZero()) {
			t.Errorf("%s: %+v, %v; want ok %v, %s %q turn %q", c.in, p, ok, c.ok, c.agent, c.text, c.turn)
		}
	}
}
