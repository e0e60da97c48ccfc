package gateway

import (
	"bytes"
	"encoding/json"
)

// openAIUsage is the usage object of both OpenAI APIs: the Responses API names its counts
// input_tokens and output_tokens, Chat Completions prompt_tokens and completion_tokens; both
// count cached and reasoning tokens inside those totals, in their details objects.
type openAIUsage struct {
	Input        *int64        `json:"input_tokens"`
	Output       *int64        `json:"output_tokens"`
	Prompt       *int64        `json:"prompt_tokens"`
	Completion   *int64        `json:"completion_tokens"`
	InputDetail  *openAIDetail `json:"input_tokens_details"`
	OutputDetail *openAIDetail `json:"output_tokens_details"`
	PromptDetail *openAIDetail `json:"prompt_tokens_details"`
	ComplDetail  *openAIDetail `json:"completion_tokens_details"`
}

type openAIDetail struct {
	Cached    int64 `json:"cached_tokens"`
	Reasoning int64 `json:"reasoning_tokens"`
}

// usage converts to the receipt's kinds: Input is the uncached part of the prompt (as
// Anthropic reports it), CacheRead the cached part, Output every generated token with
// Reasoning the part of it spent reasoning. OpenAI's automatic cache has no write charge.
// Negative or inconsistent counts are clamped: a receipt must never subtract.
func (w *openAIUsage) usage() Usage {
	pick := func(a, b *int64) int64 {
		if a != nil && *a >= 0 {
			return *a
		}
		if b != nil && *b >= 0 {
			return *b
		}
		return 0
	}
	detail := func(a, b *openAIDetail) openAIDetail {
		if a != nil {
			return *a
		}
		if b != nil {
			return *b
		}
		return openAIDetail{}
	}
	in, out := pick(w.Input, w.Prompt), pick(w.Output, w.Completion)
	cached := min(max(detail(w.InputDetail, w.PromptDetail).Cached, 0), in)
	reasoning := min(max(detail(w.OutputDetail, w.ComplDetail).Reasoning, 0), out)
	return Usage{Input: in - cached, CacheRead: cached, Output: out, Reasoning: reasoning}
}

// responsesObject is what the receipt reads of a Responses API response object.
type responsesObject struct {
	Object string       `json:"object"`
	Status string       `json:"status"`
	Model  string       `json:"model"`
	Usage  *openAIUsage `json:"usage"`
}

// ResponsesUsage reads a non-streaming Responses API body: ok when it is a response object
// whose status is "completed" and that reports usage (a failed, incomplete, queued or
// in-progress response is never recorded).
func ResponsesUsage(body []byte) (model string, u Usage, ok bool) {
	var r responsesObject
	if json.Unmarshal(body, &r) != nil || r.Object != "response" || r.Status != "completed" || r.Usage == nil {
		return "", Usage{}, false
	}
	return r.Model, r.Usage.usage(), true
}

// ResponsesStreamUsage reads a Responses API event stream: complete only when its last event
// is response.completed carrying the completed response with its usage (a stream that ends
// in response.failed, response.incomplete or error, or is cut short, is not).
func ResponsesStreamUsage(body []byte) (model string, u Usage, complete bool) {
	var last string
	var lastData []byte
	forEachEvent(body, func(name string, data []byte) {
		if name == "" {
			var t struct {
				Type string `json:"type"`
			}
			json.Unmarshal(data, &t)
			name = t.Type
		}
		last, lastData = name, data
	})
	if last != "response.completed" {
		return "", Usage{}, false
	}
	var ev struct {
		Response responsesObject `json:"response"`
	}
	if json.Unmarshal(lastData, &ev) != nil || ev.Response.Status != "completed" || ev.Response.Usage == nil {
		return "", Usage{}, false
	}
	return ev.Response.Model, ev.Response.Usage.usage(), true
}

// chatObject is what the receipt reads of a Chat Completions response or chunk.
type chatObject struct {
	Object string          `json:"object"`
	Model  string          `json:"model"`
	Usage  *openAIUsage    `json:"usage"`
	Error  json.RawMessage `json:"error"`
}

// ChatUsage reads a non-streaming Chat Completions body: ok when it is a chat.completion
// object. A body without usage has u.Unmetered set (its tokens are unknown).
func ChatUsage(body []byte) (model string, u Usage, ok bool) {
	var c chatObject
	if json.Unmarshal(body, &c) != nil || c.Object != "chat.completion" {
		return "", Usage{}, false
	}
	if c.Usage == nil {
		return c.Model, Usage{Unmetered: true}, true
	}
	return c.Model, c.Usage.usage(), true
}

// ChatStreamUsage reads a Chat Completions event stream: complete only when every event is a
// chat.completion.chunk and the last is "data: [DONE]" (an error event, or a stream cut
// short, is not). The usage is the chunk that carries it, sent only when the request asked
// with stream_options.include_usage; without it u.Unmetered is set.
func ChatStreamUsage(body []byte) (model string, u Usage, complete bool) {
	done, bad, metered := false, false, false
	forEachEvent(body, func(_ string, data []byte) {
		if done || bad {
			bad = true // nothing may follow [DONE]
			return
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			done = true
			return
		}
		var c chatObject
		if json.Unmarshal(data, &c) != nil || c.Object != "chat.completion.chunk" || len(c.Error) > 0 && !bytes.Equal(c.Error, []byte("null")) {
			bad = true
			return
		}
		if model == "" {
			model = c.Model
		}
		if c.Usage != nil {
			u, metered = c.Usage.usage(), true
		}
	})
	if bad || !done {
		return "", Usage{}, false
	}
	u.Unmetered = !metered
	return model, u, true
}

// responseUsage reads a recorded response of api: its model, its usage, and whether it is
// complete enough to replay.
func responseUsage(api API, stream bool, body []byte) (model string, u Usage, ok bool) {
	switch {
	case api == APIResponses && stream:
		return ResponsesStreamUsage(body)
	case api == APIResponses:
		return ResponsesUsage(body)
	case api == APIChat && stream:
		return ChatStreamUsage(body)
	case api == APIChat:
		return ChatUsage(body)
	case stream:
		return StreamUsage(body)
	default:
		return MessageUsage(body)
	}
}
