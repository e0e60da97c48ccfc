package mockanthropic

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func openAICall(t *testing.T, s *Server, method, path, body, auth string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Both OpenAI APIs answer as the real ones do, JSON and streamed, with usage counting a cached
// part of a long prompt and reasoning tokens; a failing model fails; polling is a 404.
func TestOpenAIPaths(t *testing.T) {
	s := New(Options{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	long := strings.Repeat("x", 8000)
	code, _, body := openAICall(t, s, "POST", "/v1/responses", `{"model":"gpt-5","input":"`+long+`"}`, "Bearer k")
	var r struct {
		Object, Status string
		Usage          struct {
			InputTokens  int `json:"input_tokens"`
			InputDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputDetails struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		}
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || code != 200 || r.Object != "response" || r.Status != "completed" ||
		r.Usage.InputDetails.CachedTokens == 0 || r.Usage.InputDetails.CachedTokens%128 != 0 || r.Usage.OutputDetails.ReasoningTokens != 2 {
		t.Fatalf("responses: %d %s (%v)", code, body, err)
	}
	code, h, body := openAICall(t, s, "POST", "/v1/responses", `{"model":"gpt-5","stream":true,"input":"hi"}`, "Bearer k")
	if code != 200 || h.Get("Content-Type") != "text/event-stream; charset=utf-8" || !strings.HasSuffix(body, "\n\n") ||
		!strings.Contains(body, "event: response.completed\ndata: {") || strings.Count(body, "event: ") != 9 {
		t.Fatalf("responses stream: %d %s", code, body)
	}
	code, _, body = openAICall(t, s, "POST", "/v1/chat/completions", `{"model":"gpt-5","stream":true,"stream_options":{"include_usage":true},"messages":[]}`, "Bearer k")
	if code != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") || !strings.Contains(body, `"usage":{`) {
		t.Fatalf("chat stream: %d %s", code, body)
	}
	code, _, body = openAICall(t, s, "POST", "/v1/chat/completions", `{"model":"gpt-5","stream":true,"messages":[]}`, "Bearer k")
	if code != 200 || strings.Contains(body, `"usage"`) {
		t.Fatalf("chat stream without include_usage carries usage: %s", body)
	}
	if _, _, body = openAICall(t, s, "POST", "/v1/responses", `{"model":"mock-fail","stream":true,"input":"hi"}`, "Bearer k"); !strings.Contains(body, "event: response.failed") || strings.Contains(body, "response.completed") {
		t.Fatalf("mock-fail stream: %s", body)
	}
	if code, _, _ = openAICall(t, s, "POST", "/v1/responses", `{}`, ""); code != 401 {
		t.Errorf("no credential: %d", code)
	}
	if code, _, _ = openAICall(t, s, "POST", "/v1/responses", `[`, "Bearer k"); code != 400 {
		t.Errorf("bad body: %d", code)
	}
	if code, _, _ = openAICall(t, s, "GET", "/v1/responses/resp_1", "", "Bearer k"); code != 404 {
		t.Errorf("polling: %d", code)
	}
	if s.PathHits("/v1/responses") != 3 || s.PathHits("/v1/chat/completions") != 2 || s.PathHits("/v1/responses/{id}") != 1 || s.Hits() != 5 {
		t.Errorf("hits: responses %d, chat %d, polling %d, all %d", s.PathHits("/v1/responses"), s.PathHits("/v1/chat/completions"), s.PathHits("/v1/responses/{id}"), s.Hits())
	}
}
