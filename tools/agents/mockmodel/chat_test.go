package mockmodel

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestChatParseCline reads a request Cline CLI 3.0.65 sent through its openai-compatible
// provider after one run_commands call.
func TestChatParseCline(t *testing.T) {
	body, err := os.ReadFile("testdata/cline-3.0.65-chat.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := chat{}.parse(nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.API != "openai-chat" || c.Model != "mock-model" || !c.Stream {
		t.Errorf("API, model, stream = %q, %q, %v", c.API, c.Model, c.Stream)
	}
	if !c.HasTool("run_commands") || !c.HasTool("editor") || c.Tools[0] != "read_files" {
		t.Errorf("tools %v", c.Tools)
	}
	if !strings.HasPrefix(c.System, "You are Cline") {
		t.Errorf("system %.80q", c.System)
	}
	calls := c.Calls()
	if len(calls) != 1 || calls[0].ID != "call_mock_01" || calls[0].Name != "run_commands" || string(calls[0].Args) != `{"commands":["echo hi > a.txt"]}` {
		t.Fatalf("calls %+v", calls)
	}
	if res, ok := c.Result("call_mock_01"); !ok || !strings.Contains(res.Text, `"success":true`) {
		t.Errorf("result %+v", res)
	}
	if c.LastUserText() != "write a file" {
		t.Errorf("last user text %q", c.LastUserText())
	}
}

// TestChatAnswers plays two parallel tool calls and a text, as JSON and as chunks, and puts
// the chunks together as a client does.
func TestChatAnswers(t *testing.T) {
	body, err := os.ReadFile("testdata/cline-3.0.65-chat.json")
	if err != nil {
		t.Fatal(err)
	}
	calls := Turn{ToolCalls: []ToolCall{
		{ID: "call_a", Name: "run_commands", Args: json.RawMessage(`{"commands":["git push"]}`)},
		{ID: "call_b", Name: "read_files", Args: json.RawMessage(`{"files":[{"path":"/x"}]}`)},
	}}
	for _, stream := range []bool{false, true} {
		for _, turn := range []Turn{calls, {Text: "done"}} {
			s := startWith(t, func(*Conversation) Turn { return turn })
			resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", bytes.NewReader(setStream(t, body, stream)))
			if err != nil {
				t.Fatal(err)
			}
			var text, finish string
			var got []ToolCall
			var usage map[string]any
			if stream {
				events := readSSE(t, resp.Body)
				if last := events[len(events)-1]; last.raw != "[DONE]" {
					t.Errorf("last data %q, want [DONE]", last.raw)
				}
				for _, e := range events[:len(events)-1] {
					if u, ok := e.data["usage"].(map[string]any); ok {
						usage = u
					}
					for _, ch := range e.data["choices"].([]any) {
						ch := ch.(map[string]any)
						if f, ok := ch["finish_reason"].(string); ok {
							finish = f
						}
						d := ch["delta"].(map[string]any)
						if s, ok := d["content"].(string); ok {
							text += s
						}
						tcs, _ := d["tool_calls"].([]any)
						for _, tc := range tcs {
							tc := tc.(map[string]any)
							i := int(tc["index"].(float64))
							for len(got) <= i {
								got = append(got, ToolCall{})
							}
							if id, ok := tc["id"].(string); ok {
								got[i].ID = id
							}
							fn := tc["function"].(map[string]any)
							if n, ok := fn["name"].(string); ok {
								got[i].Name = n
							}
							got[i].Args = append(got[i].Args, fn["arguments"].(string)...)
						}
					}
				}
			} else {
				var r struct {
					Choices []struct {
						Message struct {
							Content   *string
							ToolCalls []chatToolCall `json:"tool_calls"`
						}
						FinishReason string `json:"finish_reason"`
					}
					Usage map[string]any
				}
				if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
					t.Fatal(err)
				}
				ch := r.Choices[0]
				if ch.Message.Content != nil {
					text = *ch.Message.Content
				}
				for _, tc := range ch.Message.ToolCalls {
					got = append(got, ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: json.RawMessage(tc.Function.Arguments)})
				}
				finish, usage = ch.FinishReason, r.Usage
			}
			resp.Body.Close()
			wantFinish := "stop"
			if len(turn.ToolCalls) > 0 {
				wantFinish = "tool_calls"
			}
			if text != turn.Text || finish != wantFinish || mustJSON(t, got) != mustJSON(t, turn.ToolCalls) {
				t.Errorf("stream %v: text %q, finish %q, calls %s; want %q, %q, %s", stream, text, finish, mustJSON(t, got), turn.Text, wantFinish, mustJSON(t, turn.ToolCalls))
			}
			if usage == nil || usage["prompt_tokens"].(float64) <= 0 {
				t.Errorf("stream %v: usage %v", stream, usage)
			}
		}
	}
}

// TestChatBadInput: what is not a Chat Completions request gets a 400 naming what is wrong.
func TestChatBadInput(t *testing.T) {
	for body, want := range map[string]string{
		`"hi"`: "not a Chat Completions request",
		`{"messages":[{"role":"tool","content":"x"}]}`:                                                                    "without tool_call_id",
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{"}}]}]}`:           "not JSON",
		`{"messages":[{"role":"oracle","content":"x"}]}`:                                                                  `role "oracle"`,
		`{"messages":[{"role":"user","content":{"a":1}}]}`:                                                                "neither a string nor a list",
		`{"messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`: "has no id",
	} {
		s := startWith(t, func(*Conversation) Turn { return Turn{Text: "x"} })
		resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), want) {
			t.Errorf("%s: %d %q, want 400 with %q", body, resp.StatusCode, msg, want)
		}
	}
}
