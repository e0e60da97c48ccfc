package mockmodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestResponsesParseCodex reads a request Codex CLI 0.169.0 sent (after a tool_search and a
// shell call): the tools it offered, the MCP tools that search loaded, the calls and results.
func TestResponsesParseCodex(t *testing.T) {
	body, err := os.ReadFile("testdata/codex-0.169.0-responses.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := responses{}.parse(nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.API != "openai-responses" || c.Model != "gpt-5.5" || !c.Stream {
		t.Errorf("API, model, stream = %q, %q, %v", c.API, c.Model, c.Stream)
	}
	for _, name := range []string{"exec_command", "apply_patch", "tool_search", "web_search", "mcp__agent_rewind__checkpoint", "mcp__agent_rewind__rewind"} {
		if !c.HasTool(name) {
			t.Errorf("tool %s not offered; tools: %v", name, c.Tools)
		}
	}
	if !strings.Contains(c.System, "Deferred tool namespaces") || !strings.Contains(c.System, "You are Codex") {
		t.Errorf("system prompt lacks the developer messages: %.200q", c.System)
	}
	if got := c.LastUserText(); got != "write a file" {
		t.Errorf("last user text %q", got)
	}
	calls := c.Calls()
	if len(calls) != 2 || calls[0].Name != "tool_search" || calls[1].Name != "exec_command" {
		t.Fatalf("calls %+v", calls)
	}
	var args struct{ Cmd string }
	if err := json.Unmarshal(calls[1].Args, &args); err != nil || args.Cmd != "echo hi > a.txt" {
		t.Errorf("exec_command args %s (%v)", calls[1].Args, err)
	}
	search, ok := c.Result(calls[0].ID)
	if !ok || !strings.Contains(search.Text, "Before risky work, call checkpoint") {
		t.Errorf("the tool search result (where Codex puts the server's instructions) reads %.200q", search.Text)
	}
	if res, ok := c.Result(calls[1].ID); !ok || !strings.Contains(res.Text, "Process exited with code 0") {
		t.Errorf("shell result %+v", res)
	}
}

// TestResponsesAnswers plays a namespaced MCP call, a custom tool call, a tool search and a
// text over HTTP, as JSON and as events, and reads each back as a client would.
func TestResponsesAnswers(t *testing.T) {
	body, err := os.ReadFile("testdata/codex-0.169.0-responses.json")
	if err != nil {
		t.Fatal(err)
	}
	turns := []Turn{
		{ToolCalls: []ToolCall{{ID: "call_1", Name: "mcp__agent_rewind__checkpoint", Args: json.RawMessage(`{"label":"before"}`)}}},
		{ToolCalls: []ToolCall{{ID: "call_2", Name: "apply_patch", Args: json.RawMessage(`{"input":"*** Begin Patch\n*** End Patch\n"}`)}}},
		{ToolCalls: []ToolCall{{ID: "call_3", Name: "tool_search", Args: json.RawMessage(`{"query":"rewind"}`)}}},
		{Text: "done"},
	}
	want := []map[string]any{
		{"type": "function_call", "call_id": "call_1", "name": "checkpoint", "namespace": "mcp__agent_rewind", "arguments": `{"label":"before"}`},
		{"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch\n"},
		{"type": "tool_search_call", "call_id": "call_3", "execution": "client", "arguments": map[string]any{"query": "rewind"}},
		{"type": "message", "role": "assistant"},
	}
	for _, stream := range []bool{false, true} {
		for i, turn := range turns {
			s := startWith(t, func(*Conversation) Turn { return turn })
			req := setStream(t, body, stream)
			resp, err := http.Post(s.URL+"/v1/responses", "application/json", bytes.NewReader(req))
			if err != nil {
				t.Fatal(err)
			}
			var item map[string]any
			var usage map[string]any
			if stream {
				if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
					t.Errorf("content type %q", ct)
				}
				events := readSSE(t, resp.Body)
				if events[0].name != "response.created" || events[len(events)-1].name != "response.completed" {
					t.Errorf("events from %s to %s", events[0].name, events[len(events)-1].name)
				}
				for _, e := range events {
					if e.name == "response.output_item.done" {
						item = e.data["item"].(map[string]any)
					}
					if e.data["type"] != e.name {
						t.Errorf("event %s has type %v", e.name, e.data["type"])
					}
				}
				usage = events[len(events)-1].data["response"].(map[string]any)["usage"].(map[string]any)
			} else {
				var r struct {
					Output []map[string]any
					Usage  map[string]any
				}
				if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
					t.Fatal(err)
				}
				item, usage = r.Output[0], r.Usage
			}
			resp.Body.Close()
			for k, v := range want[i] {
				if got, _ := json.Marshal(item[k]); string(got) != mustJSON(t, v) {
					t.Errorf("stream %v, turn %d: %s = %s, want %s", stream, i, k, got, mustJSON(t, v))
				}
			}
			if usage["input_tokens"].(float64) <= 0 || usage["total_tokens"] == nil {
				t.Errorf("usage %v", usage)
			}
			if i == 3 && stream {
				if text := item["content"].([]any)[0].(map[string]any)["text"]; text != "done" {
					t.Errorf("text %v", text)
				}
			}
		}
	}
}

// TestResponsesBadInput: what is not a Responses request gets a 400 naming what is wrong.
func TestResponsesBadInput(t *testing.T) {
	for body, want := range map[string]string{
		`[1]`: "not a Responses API request",
		`{"input":[{"type":"function_call","name":"x","arguments":"{}"}]}`:              "no call_id",
		`{"input":[{"type":"function_call","call_id":"a","name":"x","arguments":"{"}]}`: "are not JSON",
		`{"input":[{"type":"function_call","call_id":"a","name":"x","arguments":{}}]}`:  "not a string holding JSON",
		`{"input":[{"type":"brand_new","call_id":"a"}]}`:                                `type "brand_new"`,
		`{"input":[{"type":"message","role":"robot","content":"hi"}]}`:                  `role "robot"`,
		`{"input":7}`: "neither a string nor a list",
	} {
		s := startWith(t, func(*Conversation) Turn { return Turn{Text: "x"} })
		resp, err := http.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), want) {
			t.Errorf("%s: %d %q, want 400 with %q", body, resp.StatusCode, msg, want)
		}
		if log := s.Log(); len(log) != 1 || !strings.Contains(log[0].Err, want) {
			t.Errorf("%s: log %+v", body, log)
		}
	}
}

func startWith(t *testing.T, script Script) *Server {
	t.Helper()
	s, err := Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// setStream returns the request body with "stream" set.
func setStream(t *testing.T, body []byte, stream bool) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["stream"] = json.RawMessage(mustJSON(t, stream))
	b, _ := json.Marshal(m)
	return b
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type event struct {
	name string // the event: line, "" when there is none
	data map[string]any
	raw  string
}

// readSSE reads a whole event stream; a data line that is not a JSON object is kept in raw.
func readSSE(t *testing.T, r io.Reader) []event {
	t.Helper()
	var events []event
	var cur event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.raw = strings.TrimPrefix(line, "data: ")
			if json.Unmarshal([]byte(cur.raw), &cur.data) != nil {
				cur.data = nil
			}
		case line == "":
			events = append(events, cur)
			cur = event{}
		default:
			t.Errorf("not an event stream line: %q", line)
		}
	}
	if len(events) == 0 {
		t.Fatal("no events")
	}
	return events
}
