package agents

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// TestCodexThroughGateway runs the real Codex CLI with its model provider's base_url at
// agent-rewind's gateway, in front of the mock Responses upstream: the first session's model
// calls go upstream and are recorded; a second identical scripted session is answered from
// the replay store, with no model call reaching the upstream, and ends as the first did.
func TestCodexThroughGateway(t *testing.T) {
	e := New(t)
	m := e.Model(mockmodel.Sequence("the answer is 42"))
	gw := e.Gateway(m.URL)
	e.CodexConfigureAt(m, gw.URL+"/v1")
	prompt := "what is the answer?"
	first := e.Codex(m, e.Project, CodexOptions{}, prompt)
	upstream := len(m.Answered())
	if upstream == 0 {
		t.Fatalf("no model call reached the upstream through the gateway; gateway log:\n%s", gw.Log())
	}
	codexNoOtherHost(t, m)
	for _, ex := range m.Answered() {
		var body map[string]json.RawMessage
		json.Unmarshal(ex.Conversation.Raw, &body)
		if string(body["store"]) != "false" {
			t.Errorf("Codex sent store %s: the gateway never replays a stored response", body["store"])
		}
	}
	second := e.Codex(m, e.Project, CodexOptions{}, prompt)
	if n := len(m.Answered()) - upstream; n != 0 {
		var keys []string
		for _, ex := range m.Answered()[upstream:] {
			var body map[string]json.RawMessage
			json.Unmarshal(ex.Conversation.Raw, &body)
			for k, v := range body {
				if k != "input" && k != "tools" && k != "instructions" {
					keys = append(keys, k+"="+string(v))
				}
			}
		}
		t.Fatalf("the second identical session made %d upstream model calls, want 0 (answered from the replay store); its requests' other members: %s\ngateway log:\n%s", n, strings.Join(keys, " "), gw.Log())
	}
	if a, b := agentMessage(first), agentMessage(second); a == "" || a != b {
		t.Errorf("the sessions ended with %q and %q, want the same answer", a, b)
	}
}

// agentMessage is the text of the session's last agent message.
func agentMessage(s CodexSession) string {
	var text string
	for _, ev := range s.Events {
		item, _ := ev["item"].(map[string]any)
		if ev["type"] == "item.completed" && item["type"] == "agent_message" {
			text, _ = item["text"].(string)
		}
	}
	return text
}

// TestCodexThroughGatewayTape records a Codex CLI session on the gateway's durable tape, then
// replays it with a cursor after a restart: the rerun of the same session is answered from the
// tape in order (Codex labels every session afresh; the tape matches without the labels), with
// no model call reaching the upstream.
func TestCodexThroughGatewayTape(t *testing.T) {
	e := New(t)
	e.Set("REWIND_STORAGE_KEY", strings.Repeat("3c", 32))
	m := e.Model(mockmodel.Sequence("the answer is 42"))
	dir := filepath.Join(t.TempDir(), "storage")
	rec := e.Gateway(m.URL, "--storage", "sqlite", "--storage-directory", dir, "--epoch", "codex-1")
	e.CodexConfigureAt(m, rec.URL+"/v1")
	prompt := "what is the answer?"
	first := e.Codex(m, e.Project, CodexOptions{}, prompt)
	upstream := len(m.Answered())
	if upstream == 0 || !strings.Contains(rec.Log(), "durable tape: RECORD") {
		t.Fatalf("nothing was recorded through the gateway; its log:\n%s", rec.Log())
	}
	rec.Stop()
	rep := e.Gateway(m.URL, "--storage", "sqlite", "--storage-directory", dir, "--epoch", "codex-1", "--replay-cursor", "rerun")
	e.CodexConfigureAt(m, rep.URL+"/v1")
	second := e.Codex(m, e.Project, CodexOptions{}, prompt)
	if n := len(m.Answered()) - upstream; n != 0 {
		t.Fatalf("the rerun made %d upstream model calls, want 0 (answered from the tape); gateway log:\n%s", n, rep.Log())
	}
	if a, b := agentMessage(first), agentMessage(second); a == "" || a != b {
		t.Errorf("the sessions ended with %q and %q, want the same answer", a, b)
	}
}
