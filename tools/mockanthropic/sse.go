package mockanthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Message is the part of an Anthropic Message the stream is built from.
type Message struct {
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	Role         string            `json:"role"`
	Model        string            `json:"model"`
	Content      []json.RawMessage `json:"content"`
	StopReason   *string           `json:"stop_reason"`
	StopSequence *string           `json:"stop_sequence"`
	Usage        map[string]any    `json:"usage"`
}

// Event is one server-sent event: its name and its JSON data.
type Event struct {
	Name string
	Data []byte
}

// Bytes returns the event as it goes on the wire.
func (e Event) Bytes() []byte {
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", e.Name, e.Data)
}

// chunk is the largest piece of text or tool-input JSON one delta event carries.
const chunk = 24

// Events renders the Message in message (the non-streaming response body) as the event sequence
// the API streams for it (see the package doc).
func Events(message []byte) ([]Event, error) {
	var m Message
	dec := json.NewDecoder(bytes.NewReader(message))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("mockanthropic: response is not a Message: %w", err)
	}
	var evs []Event
	add := func(name string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		evs = append(evs, Event{name, b})
		return nil
	}

	startUsage := map[string]any{}
	for k, v := range m.Usage {
		startUsage[k] = v
	}
	startUsage["output_tokens"] = 1
	head := m
	head.Content = []json.RawMessage{}
	head.StopReason, head.StopSequence = nil, nil
	head.Usage = startUsage
	if err := add("message_start", map[string]any{"type": "message_start", "message": head}); err != nil {
		return nil, err
	}

	for i, raw := range m.Content {
		var block map[string]any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&block); err != nil {
			return nil, fmt.Errorf("mockanthropic: content block %d: %w", i, err)
		}
		start, deltas, err := blockEvents(block)
		if err != nil {
			return nil, fmt.Errorf("mockanthropic: content block %d: %w", i, err)
		}
		if err := add("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start}); err != nil {
			return nil, err
		}
		if i == 0 {
			evs = append(evs, Event{"ping", []byte(`{"type": "ping"}`)})
		}
		for _, d := range deltas {
			if err := add("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}); err != nil {
				return nil, err
			}
		}
		if err := add("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}); err != nil {
			return nil, err
		}
	}

	// The final usage: the API reports cumulative counts here, output_tokens included.
	final := map[string]any{}
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
		if v, ok := m.Usage[k]; ok {
			final[k] = v
		}
	}
	delta := map[string]any{"stop_reason": m.StopReason, "stop_sequence": m.StopSequence}
	if err := add("message_delta", map[string]any{"type": "message_delta", "delta": delta, "usage": final}); err != nil {
		return nil, err
	}
	if err := add("message_stop", map[string]any{"type": "message_stop"}); err != nil {
		return nil, err
	}
	return evs, nil
}

// blockEvents returns a content block's content_block_start payload and its deltas.
func blockEvents(block map[string]any) (start map[string]any, deltas []map[string]any, err error) {
	switch t, _ := block["type"].(string); t {
	case "text":
		text, _ := block["text"].(string)
		for _, piece := range split(text) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": piece})
		}
		return map[string]any{"type": "text", "text": ""}, deltas, nil
	case "thinking":
		text, _ := block["thinking"].(string)
		for _, piece := range split(text) {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": piece})
		}
		if sig, ok := block["signature"].(string); ok {
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": sig})
		}
		return map[string]any{"type": "thinking", "thinking": "", "signature": ""}, deltas, nil
	case "tool_use", "server_tool_use":
		input, err := json.Marshal(block["input"])
		if err != nil {
			return nil, nil, err
		}
		deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": ""})
		for _, piece := range split(string(input)) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": piece})
		}
		return map[string]any{"type": t, "id": block["id"], "name": block["name"], "input": map[string]any{}}, deltas, nil
	default:
		return nil, nil, fmt.Errorf("type %q: the mock streams text, thinking and tool_use blocks", t)
	}
}

// split cuts s into pieces of at most chunk bytes, on rune boundaries.
func split(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(chunk, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 {
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// SSE returns the whole stream for message, as the server sends it.
func SSE(message []byte) ([]byte, error) {
	evs, err := Events(message)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, e := range evs {
		b.Write(e.Bytes())
	}
	return b.Bytes(), nil
}
