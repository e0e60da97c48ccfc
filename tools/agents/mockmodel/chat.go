package mockmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// chat is OpenAI's Chat Completions API (POST /v1/chat/completions), which Cline CLI's
// "openai-compatible" provider speaks (and most OpenAI-compatible servers): the history is a
// list of messages with roles system, developer, user, assistant (with tool_calls) and tool
// (one result, by tool_call_id); the answer is a chat.completion, or with "stream": true,
// chat.completion.chunk events ending in "data: [DONE]", the usage in a last chunk of its own
// when stream_options.include_usage asks for it.
type chat struct{}

func init() { routes["POST /v1/chat/completions"] = chat{} }

type chatRequest struct {
	Model    string        `json:"model"`
	Stream   bool          `json:"stream"`
	Messages []chatMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string, null, or a list of parts
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"` // JSON text
	} `json:"function"`
}

func (chat) parse(r *http.Request, body []byte) (Conversation, error) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return Conversation{}, fmt.Errorf("openai-chat: the request body is not a Chat Completions request (%v); send a JSON object with model and messages", err)
	}
	c := Conversation{API: "openai-chat", Model: req.Model, Stream: req.Stream}
	for _, t := range req.Tools {
		if t.Function.Name != "" && !c.HasTool(t.Function.Name) {
			c.Tools = append(c.Tools, t.Function.Name)
		}
	}
	var system []string
	for i, m := range req.Messages {
		text, err := chatText(m.Content)
		if err != nil {
			return Conversation{}, fmt.Errorf("openai-chat: message %d (%s): %w", i, m.Role, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			c.Messages = append(c.Messages, Message{Role: "user", Text: text})
		case "assistant":
			msg := Message{Role: "assistant", Text: text}
			for _, tc := range m.ToolCalls {
				args := json.RawMessage(tc.Function.Arguments)
				if strings.TrimSpace(tc.Function.Arguments) == "" {
					args = json.RawMessage("{}")
				}
				if tc.ID == "" || !json.Valid(args) {
					return Conversation{}, fmt.Errorf("openai-chat: message %d: tool call %q of %s has no id or arguments that are not JSON (%s)", i, tc.ID, tc.Function.Name, clipped(args))
				}
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
			}
			c.Messages = append(c.Messages, msg)
		case "tool":
			if m.ToolCallID == "" {
				return Conversation{}, fmt.Errorf("openai-chat: message %d is a tool result without tool_call_id; it must name the call it answers", i)
			}
			c.Messages = appendResult(c.Messages, ToolResult{CallID: m.ToolCallID, Text: text})
		default:
			return Conversation{}, fmt.Errorf("openai-chat: message %d has role %q; the roles are system, developer, user, assistant and tool", i, m.Role)
		}
	}
	c.System = strings.Join(system, "\n")
	return c, nil
}

// chatText joins a message's text parts (content is a string, null, or parts of type text;
// images and audio are left out).
func chatText(content json.RawMessage) (string, error) {
	if len(content) == 0 || string(content) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor a list of parts (%v)", err)
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" || p.Type == "input_text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

func (chat) write(w http.ResponseWriter, c *Conversation, t Turn) error {
	var req chatRequest
	_ = json.Unmarshal(c.Raw, &req) // parse read it already
	id, created := nextID("chatcmpl-"), unixNow()
	finish := "stop"
	var calls []map[string]any
	for _, tc := range t.ToolCalls {
		calls = append(calls, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": string(tc.Args)}})
		finish = "tool_calls"
	}
	in, out := tokens(len(c.Raw)), tokens(turnSize(t))
	usage := map[string]any{
		"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out,
		"prompt_tokens_details": map[string]int{"cached_tokens": 0}, "completion_tokens_details": map[string]int{"reasoning_tokens": 0},
	}
	if !c.Stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		if t.Text != "" || len(calls) == 0 {
			msg["content"] = t.Text
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		return writeJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": c.Model,
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
	}
	ev := newSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": c.Model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	ev.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if t.Text != "" {
		ev.send("", chunk(map[string]any{"content": t.Text}, nil))
	}
	for i, tc := range t.ToolCalls {
		// the id and name first, then the arguments, as the API streams them
		ev.send("", chunk(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": ""}}}}, nil))
		ev.send("", chunk(map[string]any{"tool_calls": []map[string]any{{"index": i, "function": map[string]any{"arguments": string(tc.Args)}}}}, nil))
	}
	ev.send("", chunk(map[string]any{}, finish))
	if req.StreamOptions.IncludeUsage {
		ev.send("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": c.Model, "choices": []any{}, "usage": usage})
	}
	ev.send("", "[DONE]")
	return ev.err
}
