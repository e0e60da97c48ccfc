package mockmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// anthropic is the Anthropic Messages API (Claude Code, GitHub Copilot CLI with an Anthropic
// provider): POST /v1/messages, answered as a Message or, for "stream": true, as the exact
// server-sent event sequence mockanthropic renders for that Message.
type anthropic struct{}

func init() {
	routes["POST /v1/messages"] = anthropic{}
}

// anthropicRequest is the part of a Messages request the mock reads.
type anthropicRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"` // a string, or an array of text blocks
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string, or an array of blocks
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// anthropicBlock is one content block of any kind the mock reads; unknown kinds are skipped.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // a tool_result's: a string, or an array of blocks
	IsError   bool            `json:"is_error"`
	ToolName  string          `json:"tool_name"` // a tool_reference's (what ToolSearch returns)
}

func (anthropic) parse(r *http.Request, body []byte) (Conversation, error) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return Conversation{}, fmt.Errorf("anthropic: the body is not a Messages request: %w", err)
	}
	c := Conversation{API: "anthropic", Model: req.Model, Stream: req.Stream}
	sys, err := anthropicBlocks(req.System)
	if err != nil {
		return Conversation{}, fmt.Errorf("anthropic: system: %w", err)
	}
	c.System = blocksText(sys)
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, t.Name)
	}
	for i, m := range req.Messages {
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return Conversation{}, fmt.Errorf("anthropic: messages[%d].content: %w", i, err)
		}
		switch m.Role {
		case "user", "assistant":
		case "system": // Claude Code sends mid-conversation system turns (the deferred tools, MCP instructions)
			c.System = joinText(c.System, blocksText(blocks))
			continue
		default:
			return Conversation{}, fmt.Errorf("anthropic: messages[%d]: role %q (want user, assistant or system)", i, m.Role)
		}
		msg := Message{Role: m.Role, Text: blocksText(blocks)}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Args: b.Input})
			case "tool_result":
				parts, err := anthropicBlocks(b.Content)
				if err != nil {
					return Conversation{}, fmt.Errorf("anthropic: messages[%d]: tool_result %s: %w", i, b.ToolUseID, err)
				}
				msg.ToolResults = append(msg.ToolResults, ToolResult{CallID: b.ToolUseID, Text: blocksText(parts), IsError: b.IsError})
			}
		}
		c.Messages = append(c.Messages, msg)
	}
	return c, nil
}

// anthropicBlocks reads content that is a string (one text block), an array of blocks, or
// absent.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []anthropicBlock{{Type: "text", Text: s}}, nil
	}
	var bs []anthropicBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, fmt.Errorf("neither a string nor an array of content blocks: %w", err)
	}
	return bs, nil
}

// blocksText joins the text of text blocks, and names each tool_reference (a deferred tool a
// ToolSearch result loads) as "tool_reference: NAME", so a script and a test can read both.
func blocksText(bs []anthropicBlock) string {
	var parts []string
	for _, b := range bs {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_reference":
			parts = append(parts, "tool_reference: "+b.ToolName)
		}
	}
	return strings.Join(parts, "\n")
}

// joinText joins two texts with a newline, either of which may be empty.
func joinText(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n" + b
}

var anthropicSeq atomic.Int64 // message ids, unique in the process

func (anthropic) write(w http.ResponseWriter, c *Conversation, t Turn) error {
	msg, err := anthropicMessage(c, t)
	if err != nil {
		return err
	}
	if !c.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, err := w.Write(msg)
		return err
	}
	evs, err := mockanthropic.Events(msg)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	for _, e := range evs {
		if _, err := w.Write(e.Bytes()); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	return nil
}

// anthropicMessage is the non-streaming Message for t: a text block when t has text, a
// tool_use block per call, stop_reason tool_use when there are calls.
func anthropicMessage(c *Conversation, t Turn) ([]byte, error) {
	content := []map[string]any{}
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for _, call := range t.ToolCalls {
		var input map[string]any
		if err := json.Unmarshal(call.Args, &input); err != nil {
			return nil, fmt.Errorf("tool call %s: arguments are not a JSON object: %w", call.ID, err)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": call.ID, "name": call.Name, "input": input})
	}
	stop := "end_turn"
	if len(t.ToolCalls) > 0 {
		stop = "tool_use"
	}
	return json.Marshal(map[string]any{
		"id": fmt.Sprintf("msg_mock_%d", anthropicSeq.Add(1)), "type": "message", "role": "assistant",
		"model": c.Model, "content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": len(c.Raw)/4 + 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 8},
	})
}
