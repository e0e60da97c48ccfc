package mockanthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// OpenAI's two APIs, served beside Messages so that the gateway's tests and benchmarks cover
// every API it understands with one no-dependency upstream: POST /v1/responses and POST
// /v1/chat/completions, each as JSON or, with "stream": true, as the event stream the real API
// sends. Answers are synthesized from the request (no recordings): deterministic for one
// request body, so a replayed answer can be compared with the upstream's byte for byte.
//
// Usage follows OpenAI's automatic prompt caching: a prompt of at least 1024 tokens (a token
// counted per four bytes of the body) reports three quarters of it, in whole 128-token
// blocks, as cached_tokens; the output is 5 tokens, 2 of them reasoning. The model
// "mock-fail" answers a failed response (Responses: status "failed", or a stream ending in
// response.failed; Chat: a stream ending in an error event), which a recorder must not keep.
// GET /v1/responses/{id} answers 404 (the mock stores nothing), counted like a call.

// openAICreated is the creation time every synthesized answer carries (2026-01-01).
const openAICreated = 1767225600

// PathHits returns how many calls to path (for example "/v1/responses") were answered.
func (s *Server) PathHits(path string) int64 {
	if v, ok := s.pathHits.Load(path); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

func (s *Server) countPath(path string) {
	c, _ := s.pathHits.LoadOrStore(path, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
}

// openAIError writes an error in OpenAI's shape.
func openAIError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// openAIUsage is the synthesized usage of a request of n bytes, in the Responses API's names
// (chat renames them).
func openAIUsage(n int) (input, cached, output, reasoning int) {
	input = (n + 3) / 4
	if input >= 1024 {
		cached = input * 3 / 4 / 128 * 128
	}
	return input, cached, 5, 2
}

// serveOpenAI answers the OpenAI paths.
func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Header.Get("Authorization") == "" {
		openAIError(w, http.StatusUnauthorized, "invalid_request_error", "mock upstream: an Authorization: Bearer header is required")
		return
	}
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/responses/") {
		s.countPath("/v1/responses/{id}")
		openAIError(w, http.StatusNotFound, "invalid_request_error", "mock upstream: no stored response "+strings.TrimPrefix(r.URL.Path, "/v1/responses/"))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		openAIError(w, http.StatusMethodNotAllowed, "invalid_request_error", "mock upstream: "+r.URL.Path+" takes POST, not "+r.Method)
		return
	}
	req, err := decodeObject(body)
	if err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "mock upstream: "+err.Error())
		return
	}
	key, _ := RequestKey(body)
	s.hits.Add(1)
	s.countPath(r.URL.Path)
	c, _ := s.keyHits.LoadOrStore(key, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
	w.Header().Set("x-request-id", fmt.Sprintf("req_mock_%08d", s.seq.Add(1)))
	model, _ := req["model"].(string)
	var events [][]byte
	var whole []byte
	if r.URL.Path == "/v1/responses" {
		whole, events = responsesAnswer(key, model, len(body))
	} else {
		whole, events = chatAnswer(key, model, len(body), includeUsage(req))
	}
	if !streaming(req) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(whole)))
		w.WriteHeader(http.StatusOK)
		w.Write(whole)
		return
	}
	s.stream(w, r, events)
}

func includeUsage(req map[string]any) bool {
	o, _ := req["stream_options"].(map[string]any)
	v, _ := o["include_usage"].(bool)
	return v
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings, numbers and nil reach here
	}
	return b
}

// responsesAnswer is the response object for a request and its event stream.
func responsesAnswer(key, model string, n int) (whole []byte, events [][]byte) {
	input, cached, output, reasoning := openAIUsage(n)
	status := "completed"
	if model == "mock-fail" {
		status = "failed"
	}
	id, msgID := "resp_mock_"+key[:24], "msg_mock_"+key[:24]
	text := map[string]any{"type": "output_text", "text": "OK.", "annotations": []any{}}
	item := map[string]any{"type": "message", "id": msgID, "status": "completed", "role": "assistant", "content": []any{text}}
	usage := map[string]any{
		"input_tokens": input, "input_tokens_details": map[string]any{"cached_tokens": cached},
		"output_tokens": output, "output_tokens_details": map[string]any{"reasoning_tokens": reasoning},
		"total_tokens": input + output,
	}
	resp := func(status string, output []any, usage any) map[string]any {
		r := map[string]any{"id": id, "object": "response", "created_at": openAICreated, "status": status,
			"model": model, "output": output, "usage": usage, "error": nil, "incomplete_details": nil,
			"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}, "store": false}
		if status == "failed" {
			r["error"] = map[string]any{"code": "server_error", "message": "mock upstream: mock-fail"}
		}
		return r
	}
	whole = mustJSON(resp(status, []any{item}, usage))
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		var b bytes.Buffer
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, mustJSON(fields))
		events = append(events, b.Bytes())
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{}, nil)})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{}, nil)})
	if status == "failed" {
		ev("response.failed", map[string]any{"response": resp("failed", []any{}, nil)})
		return whole, events
	}
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": msgID, "status": "in_progress", "role": "assistant", "content": []any{}}})
	ev("response.content_part.added", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	ev("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "delta": "OK."})
	ev("response.output_text.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "text": "OK."})
	ev("response.content_part.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": text})
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": resp("completed", []any{item}, usage)})
	return whole, events
}

// chatAnswer is the chat.completion for a request and its chunk stream (the usage in a last
// chunk of its own when the request asked for it).
func chatAnswer(key, model string, n int, withUsage bool) (whole []byte, events [][]byte) {
	input, cached, output, reasoning := openAIUsage(n)
	id := "chatcmpl-mock" + key[:24]
	usage := map[string]any{
		"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output,
		"prompt_tokens_details":     map[string]any{"cached_tokens": cached},
		"completion_tokens_details": map[string]any{"reasoning_tokens": reasoning},
	}
	whole = mustJSON(map[string]any{"id": id, "object": "chat.completion", "created": openAICreated, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "OK.", "refusal": nil}, "logprobs": nil, "finish_reason": "stop"}},
		"usage":   usage})
	chunk := func(v map[string]any) {
		v["id"], v["object"], v["created"], v["model"] = id, "chat.completion.chunk", openAICreated, model
		events = append(events, []byte("data: "+string(mustJSON(v))+"\n\n"))
	}
	choice := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	}
	chunk(choice(map[string]any{"role": "assistant", "content": ""}, nil))
	if model == "mock-fail" {
		events = append(events, []byte(`data: {"error":{"message":"mock upstream: mock-fail","type":"server_error","param":null,"code":null}}`+"\n\n"))
		return whole, events
	}
	chunk(choice(map[string]any{"content": "OK."}, nil))
	chunk(choice(map[string]any{}, "stop"))
	if withUsage {
		chunk(map[string]any{"choices": []any{}, "usage": usage})
	}
	events = append(events, []byte("data: [DONE]\n\n"))
	return whole, events
}
