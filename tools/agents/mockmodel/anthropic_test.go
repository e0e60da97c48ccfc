package mockmodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// post sends body to the server's /v1/messages and returns the status and the body.
func post(t *testing.T, s *Server, body string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// What Claude Code 2.1.328 sends, reduced: a system prompt of blocks, a system turn among the
// messages (the deferred tools), and a ToolSearch result of tool_reference blocks.
const firstRequest = `{"model":"claude-test","stream":false,
	"system":[{"type":"text","text":"You are a test."},{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],
	"tools":[{"name":"Bash","input_schema":{"type":"object"}},{"name":"ToolSearch","input_schema":{"type":"object"}}],
	"messages":[
		{"role":"user","content":"bump the version"},
		{"role":"system","content":[{"type":"text","text":"deferred: mcp__shop__send_email"}]}]}`

func TestAnthropicJSON(t *testing.T) {
	s, err := Start(Sequence("all done",
		Call(map[string]string{"command": "echo hi"}, "Shell", "Bash"),
	))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	code, body, h := post(t, s, firstRequest)
	if code != 200 || h.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q: %s", code, h.Get("Content-Type"), body)
	}
	var msg struct {
		Type       string `json:"type"`
		Role       string `json:"role"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type, ID, Name string
			Input          map[string]string
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.Role != "assistant" || msg.Model != "claude-test" || msg.StopReason != "tool_use" ||
		len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" || msg.Content[0].Name != "Bash" || msg.Content[0].Input["command"] != "echo hi" {
		t.Fatalf("answer: %s", body)
	}
	id := msg.Content[0].ID

	second := `{"model":"claude-test","tools":[{"name":"Bash"}],"messages":[
		{"role":"user","content":"bump the version"},
		{"role":"assistant","content":[{"type":"text","text":"running"},{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"echo hi"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","is_error":true,"content":[{"type":"text","text":"refused"},{"type":"tool_reference","tool_name":"mcp__shop__send_email"}]}]}]}`
	code, body, _ = post(t, s, second)
	if code != 200 || !strings.Contains(body, `"text":"all done"`) || !strings.Contains(body, `"stop_reason":"end_turn"`) {
		t.Fatalf("second answer: %d %s", code, body)
	}

	log := s.Log()
	if len(log) != 2 {
		t.Fatalf("%d exchanges logged, want 2", len(log))
	}
	c := log[0].Conversation
	if c.API != "anthropic" || c.Path != "/v1/messages" || c.Stream || c.System != "You are a test.\nBe brief.\ndeferred: mcp__shop__send_email" ||
		strings.Join(c.Tools, ",") != "Bash,ToolSearch" || len(c.Messages) != 1 || c.LastUserText() != "bump the version" {
		t.Errorf("first conversation: %+v", c)
	}
	c = log[1].Conversation
	r, ok := c.Result(id)
	if !ok || !r.IsError || r.Text != "refused\ntool_reference: mcp__shop__send_email" {
		t.Errorf("the tool result the model read: %+v (found %v)", r, ok)
	}
	if calls := c.Calls(); len(calls) != 1 || calls[0].ID != id || string(calls[0].Args) != `{"command":"echo hi"}` || c.Messages[1].Text != "running" {
		t.Errorf("the history's calls: %+v", c.Messages)
	}
}

func TestAnthropicStream(t *testing.T) {
	s, err := Start(Sequence("done", Call(map[string]any{"file_path": "/p/a.txt", "content": strings.Repeat("long text ", 10)}, "Write")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, body, h := post(t, s, strings.Replace(firstRequest, `"stream":false`, `"stream":true`, 1))
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, type %q", code, h.Get("Content-Type"))
	}
	// The tools offered have no Write: the script says so in a text, which streams too.
	var names []string
	var text string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			names = append(names, name)
		}
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev struct {
				Delta struct{ Text string } `json:"delta"`
			}
			json.Unmarshal([]byte(data), &ev)
			text += ev.Delta.Text
		}
	}
	want := "message_start content_block_start ping content_block_delta"
	if got := strings.Join(names, " "); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "content_block_stop message_delta message_stop") {
		t.Errorf("events: %s", got)
	}
	if !strings.Contains(text, "step 1 cannot be played") || !strings.Contains(text, "Bash, ToolSearch") {
		t.Errorf("streamed text: %q", text)
	}
	if !s.Log()[0].Conversation.Stream {
		t.Error("the conversation is not marked as streamed")
	}
}

func TestAnthropicBadRequests(t *testing.T) {
	s, err := Start(Sequence("done"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for body, want := range map[string]string{
		`[1]`: "not a Messages request",
		`{"messages":[{"role":"tool","content":"x"}]}`:                                                     `role "tool"`,
		`{"messages":[{"role":"user","content":42}]}`:                                                      "messages[0].content: neither a string nor an array",
		`{"system":{"text":"x"},"messages":[]}`:                                                            "system: neither a string nor an array",
		`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":7}]}]}`: "tool_result t1",
	} {
		code, got, _ := post(t, s, body)
		if code != 400 || !strings.Contains(got, want) {
			t.Errorf("%s: %d %q, want 400 naming %q", body, code, got, want)
		}
	}
	for _, ex := range s.Log() {
		if ex.Err == "" {
			t.Errorf("a bad request was logged without its error: %+v", ex.Conversation)
		}
	}
}

func FuzzAnthropic(f *testing.F) {
	f.Add([]byte(firstRequest))
	f.Add([]byte(`{"stream":true,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"ok"}]}],"tools":[{"name":"Bash"}]}`))
	f.Add([]byte(`{"system":"s","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Bash","input":null}]}]}`))
	script := Sequence("done", Call(map[string]string{"command": "ls"}, "Bash"))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := anthropic{}.parse(nil, body)
		if err != nil {
			return
		}
		c.Raw = body
		if err := (anthropic{}).write(httptest.NewRecorder(), &c, script(&c)); err != nil {
			t.Fatalf("a request that parses must get an answer: %v", err)
		}
	})
}
