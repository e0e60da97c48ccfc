package mockanthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const corpus = "../bench/testdata/nine-call"

func start(t *testing.T, opts Options, dirs ...string) *Server {
	t.Helper()
	s := New(opts)
	for _, d := range dirs {
		if _, err := s.LoadDir(filepath.Join(corpus, d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func post(t *testing.T, url string, body []byte, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", "sk-ant-test")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestServesTheCorpus(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	s := start(t, Options{OnRequest: func(r *http.Request, _ []byte) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
	}}, "repeats")
	for i := 1; i <= 9; i++ {
		base := filepath.Join(corpus, "repeats", fmt.Sprintf("%02d", i))
		reqBody, want := read(t, base+".request.json"), read(t, base+".response.json")
		resp, got := post(t, s.URL+"/v1/messages", reqBody, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("call %d: status %d: %s", i, resp.StatusCode, got)
		}
		var req map[string]any
		json.Unmarshal(reqBody, &req)
		if req["stream"] == true {
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
				t.Errorf("call %d: content type %q", i, ct)
			}
			wantSSE, err := SSE(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, wantSSE) {
				t.Errorf("call %d: the stream is not the recording's rendering", i)
			}
			checkStream(t, got, want)
		} else if !bytes.Equal(got, bytes.TrimSpace(want)) {
			t.Errorf("call %d: body %s, want the recorded message", i, got)
		}
	}
	if s.Hits() != 9 || s.Misses() != 0 {
		t.Errorf("hits %d misses %d, want 9 and 0", s.Hits(), s.Misses())
	}
	key, _ := RequestKey(read(t, filepath.Join(corpus, "repeats", "02.request.json")))
	if n := s.KeyHits(key); n != 2 {
		t.Errorf("call 2 and its repeat 7: %d hits for the key, want 2", n)
	}
	if len(seen) != 9 || seen[0].Get("x-api-key") != "sk-ant-test" {
		t.Errorf("OnRequest saw %d requests", len(seen))
	}
}

// checkStream parses an SSE body and checks it against the recorded Message: the event order,
// the reassembled text and tool input, and the final usage.
func checkStream(t *testing.T, stream, message []byte) {
	t.Helper()
	var msg struct {
		Content []map[string]any
		Usage   map[string]any
	}
	if err := json.Unmarshal(message, &msg); err != nil {
		t.Fatal(err)
	}
	var names []string
	texts := map[int]string{}
	var final map[string]any
	sc := bufio.NewScanner(bytes.NewReader(stream))
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
			names = append(names, name)
		case strings.HasPrefix(line, "data: "):
			var ev map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				t.Fatalf("event %s: bad data %q", name, line)
			}
			if ev["type"] != name {
				t.Errorf("event %s carries type %v", name, ev["type"])
			}
			switch name {
			case "content_block_delta":
				d := ev["delta"].(map[string]any)
				i := int(ev["index"].(float64))
				if s, ok := d["text"].(string); ok {
					texts[i] += s
				}
				if s, ok := d["partial_json"].(string); ok {
					texts[i] += s
				}
			case "message_delta":
				final = ev["usage"].(map[string]any)
			}
		}
	}
	if names[0] != "message_start" || names[len(names)-1] != "message_stop" || names[len(names)-2] != "message_delta" {
		t.Errorf("event order %v", names)
	}
	for i, b := range msg.Content {
		switch b["type"] {
		case "text":
			if texts[i] != b["text"] {
				t.Errorf("block %d: text %q, want %q", i, texts[i], b["text"])
			}
		case "tool_use":
			var got any
			if err := json.Unmarshal([]byte(texts[i]), &got); err != nil {
				t.Fatalf("block %d: tool input %q does not parse: %v", i, texts[i], err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(b["input"])
			if !bytes.Equal(gb, wb) {
				t.Errorf("block %d: tool input %s, want %s", i, gb, wb)
			}
		}
	}
	for _, k := range []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} {
		if final[k] != msg.Usage[k] {
			t.Errorf("final usage %s = %v, want %v", k, final[k], msg.Usage[k])
		}
	}
}

func TestCorpusShape(t *testing.T) {
	for dir, distinct := range map[string]int{"repeats": 6, "unique": 9} {
		keys := map[string]bool{}
		for i := 1; i <= 9; i++ {
			k, err := RequestKey(read(t, filepath.Join(corpus, dir, fmt.Sprintf("%02d.request.json", i))))
			if err != nil {
				t.Fatal(err)
			}
			keys[k] = true
		}
		if len(keys) != distinct {
			t.Errorf("%s: %d distinct requests, want %d", dir, len(keys), distinct)
		}
	}
}

func TestErrorsAndFallback(t *testing.T) {
	s := start(t, Options{}, "unique")
	for _, c := range []struct {
		name   string
		method string
		path   string
		body   string
		header map[string]string
		status int
		typ    string
	}{
		{"no key", "POST", "/v1/messages", `{"model":"m"}`, map[string]string{"x-api-key": ""}, 401, "authentication_error"},
		{"not json", "POST", "/v1/messages", `{"model":`, nil, 400, "invalid_request_error"},
		{"array", "POST", "/v1/messages", `[1]`, nil, 400, "invalid_request_error"},
		{"other path", "POST", "/v1/complete", `{}`, nil, 404, "not_found_error"},
		{"get", "GET", "/v1/messages", ``, nil, 405, "invalid_request_error"},
	} {
		req, _ := http.NewRequest(c.method, s.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("x-api-key", "k")
		for k, v := range c.header {
			req.Header.Del(k)
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Type  string
			Error struct{ Type, Message string }
		}
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != c.status || e.Type != "error" || e.Error.Type != c.typ || e.Error.Message == "" {
			t.Errorf("%s: %d %+v, want %d %s", c.name, resp.StatusCode, e, c.status, c.typ)
		}
	}
	if s.Hits() != 0 {
		t.Errorf("errors counted as hits: %d", s.Hits())
	}

	// A request without a recording gets the synthesized reply, streamed or not.
	resp, body := post(t, s.URL+"/v1/messages", []byte(`{"model":"claude-sonnet-5-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`), nil)
	var m Message
	if resp.StatusCode != 200 || json.Unmarshal(body, &m) != nil || m.Type != "message" || *m.StopReason != "end_turn" {
		t.Errorf("fallback: %d %s", resp.StatusCode, body)
	}
	_, stream := post(t, s.URL+"/v1/messages", []byte(`{"stream":true,"model":"claude-sonnet-5-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`), nil)
	if !bytes.HasSuffix(stream, []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")) {
		t.Errorf("fallback stream ends %q", stream[max(0, len(stream)-80):])
	}
	if s.Misses() != 2 || s.Hits() != 2 {
		t.Errorf("hits %d misses %d, want 2 and 2", s.Hits(), s.Misses())
	}
}

func TestAddConflictAndBadInput(t *testing.T) {
	s := New(Options{})
	req := []byte(`{"model":"m","messages":[],"stream":true}`)
	msg := []byte(`{"id":"a","type":"message","role":"assistant","model":"m","content":[],"stop_reason":"end_turn","stop_sequence":null,"usage":{}}`)
	if err := s.Add(req, msg); err != nil {
		t.Fatal(err)
	}
	// The same call without "stream" and with its keys reordered is the same recording.
	if err := s.Add([]byte(`{"messages":[],"model":"m"}`), msg); err != nil {
		t.Errorf("same pair again: %v", err)
	}
	other := bytes.Replace(msg, []byte(`"a"`), []byte(`"b"`), 1)
	if err := s.Add(req, other); !errors.Is(err, ErrConflict) {
		t.Errorf("conflicting response: %v, want ErrConflict", err)
	}
	if err := s.Add([]byte(`nope`), msg); !errors.Is(err, ErrNotObject) {
		t.Errorf("bad request: %v", err)
	}
	if err := s.Add(req, []byte(`{"content":[{"type":"image"}]}`)); err == nil {
		t.Error("an unstreamable response was accepted")
	}
	if _, err := s.LoadDir(t.TempDir()); err == nil {
		t.Error("an empty directory loaded")
	}
}

func TestSplitKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", 40) + "ok"
	parts := split(s)
	if strings.Join(parts, "") != s {
		t.Fatal("split lost bytes")
	}
	for _, p := range parts {
		if len(p) > chunk || !utf8Valid(p) {
			t.Errorf("piece %q", p)
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
