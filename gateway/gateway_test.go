package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// recordedMessage is a Message the mock answers with, with realistic usage.
const recordedMessage = `{"id":"msg_01Test","type":"message","role":"assistant","model":"claude-sonnet-5-5",
"content":[{"type":"text","text":"The parser accepts durations with units; the test passes now."}],
"stop_reason":"end_turn","stop_sequence":null,
"usage":{"input_tokens":120,"cache_creation_input_tokens":1000,"cache_read_input_tokens":5000,
"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":0},"output_tokens":40}}`

func TestReplayHitAndMiss(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	if err := mock.Add([]byte(messagesBody("fix the test", false)), []byte(recordedMessage)); err != nil {
		t.Fatal(err)
	}
	cfg, _ := testConfig(t, mock.URL)
	_, gw := startGateway(t, cfg)

	first := post(t, gw, "/v1/messages", messagesBody("fix the test", false), "x-api-key", key1)
	if first.status != 200 || first.header.Get(HeaderReplay) != "miss" || mock.Hits() != 1 {
		t.Fatalf("first call: %d %q, upstream hits %d: %s", first.status, first.header.Get(HeaderReplay), mock.Hits(), first.body)
	}
	// Member order and whitespace do not matter; the bytes replayed are the bytes received.
	reordered := `{ "messages":[{"content":"fix the test","role":"user"}], "max_tokens":64, "model":"claude-sonnet-5-5" }`
	second := post(t, gw, "/v1/messages", reordered, "x-api-key", key1)
	if second.status != 200 || second.header.Get(HeaderReplay) != "hit" || mock.Hits() != 1 {
		t.Fatalf("repeat: %d %q, upstream hits %d", second.status, second.header.Get(HeaderReplay), mock.Hits())
	}
	if !bytes.Equal(first.body, second.body) {
		t.Errorf("replayed body differs:\n%s\n%s", first.body, second.body)
	}
	// Anything that changes the answer is a miss: the body, the API version, the beta header,
	// the path's query.
	for i, c := range []struct{ path, body, beta, version string }{
		{"/v1/messages", messagesBody("fix the other test", false), "", "2023-06-01"},
		{"/v1/messages", messagesBody("fix the test", false), "prompt-caching-2024-07-31", "2023-06-01"},
		{"/v1/messages", messagesBody("fix the test", false), "", "2023-01-01"},
		{"/v1/messages?beta=true", messagesBody("fix the test", false), "", "2023-06-01"},
	} {
		h := []string{"x-api-key", key1}
		if c.beta != "" {
			h = append(h, "anthropic-beta", c.beta)
		}
		req, _ := http.NewRequest("POST", gw+c.path, strings.NewReader(c.body))
		req.Header.Set("anthropic-version", c.version)
		for j := 0; j < len(h); j += 2 {
			req.Header.Set(h[j], h[j+1])
		}
		resp, err := testClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get(HeaderReplay); got != "miss" {
			t.Errorf("variant %d: %s, want a miss", i, got)
		}
	}
}

func TestSSEReplayByteIdentical(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{EventDelay: time.Millisecond})
	if err := mock.Add([]byte(messagesBody("stream it", false)), []byte(recordedMessage)); err != nil {
		t.Fatal(err)
	}
	want, err := mockanthropic.SSE([]byte(recordedMessage))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := testConfig(t, mock.URL)
	_, gw := startGateway(t, cfg)
	live := post(t, gw, "/v1/messages", messagesBody("stream it", true), "x-api-key", key1)
	replay := post(t, gw, "/v1/messages", messagesBody("stream it", true), "x-api-key", key1)
	if live.header.Get(HeaderReplay) != "miss" || replay.header.Get(HeaderReplay) != "hit" || mock.Hits() != 1 {
		t.Fatalf("live %q replay %q, upstream hits %d", live.header.Get(HeaderReplay), replay.header.Get(HeaderReplay), mock.Hits())
	}
	if !bytes.Equal(live.body, want) || !bytes.Equal(replay.body, want) {
		t.Errorf("streams differ from what the upstream sent:\nupstream %q\nlive     %q\nreplay   %q", want, live.body, replay.body)
	}
	if ct := replay.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("replayed Content-Type %q", ct)
	}
	// The streaming and non-streaming forms are different requests.
	plain := post(t, gw, "/v1/messages", messagesBody("stream it", false), "x-api-key", key1)
	if plain.header.Get(HeaderReplay) != "miss" || !json.Valid(plain.body) {
		t.Errorf("non-streaming form: %q %s", plain.header.Get(HeaderReplay), plain.body)
	}
}

func TestUpstreamNeverSeesControlHeaders(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	mock := startMock(t, mockanthropic.Options{OnRequest: func(r *http.Request, _ []byte) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
	}})
	cfg, _ := testConfig(t, mock.URL)
	cfg.Tenant.set("acme", SourceFlag, "--tenant")
	_, gw := startGateway(t, cfg)
	r := post(t, gw, "/v1/messages", messagesBody("hello", false), "x-api-key", key1,
		"x-rewind-scope", "team-a", "X-Rewind-Tenant", "acme", "x-rewind-request-id", "r1", "X-REWIND-ANYTHING", "x", "x-rewind-", "y")
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	// A path that is only passed through is stripped too (the mock answers 404).
	post(t, gw, "/v1/models", "{}", "x-api-key", key1, "x-rewind-scope", "team-a")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 {
		t.Fatalf("upstream saw %d messages calls", len(seen))
	}
	for k := range seen[0] {
		if strings.HasPrefix(strings.ToLower(k), "x-rewind") {
			t.Errorf("the upstream saw %s", k)
		}
	}
	if seen[0].Get("X-Api-Key") != key1 {
		t.Error("the credential did not reach the upstream")
	}
}

func TestUpstreamNeverSeesControlHeadersOnPassThrough(t *testing.T) {
	got := make(chan http.Header, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // a server notices a client leaving only once the body is read
		got <- r.Header.Clone()
		w.Write([]byte(`{"data":[]}`))
	}))
	defer up.Close()
	cfg, _ := testConfig(t, up.URL)
	_, gw := startGateway(t, cfg)
	req, _ := http.NewRequest("GET", gw+"/v1/models", nil)
	req.Header.Set("x-rewind-scope", "s1")
	req.Header.Set("x-rewind-other", "v")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k := range <-got {
		if strings.HasPrefix(strings.ToLower(k), "x-rewind") {
			t.Errorf("the upstream saw %s", k)
		}
	}
}

func TestScopeAndTenant(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	cfg.Tenant.set("acme", SourceFlag, "--tenant")
	_, gw := startGateway(t, cfg)
	for _, c := range []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"scope with a space", []string{"x-rewind-scope", "team a"}, 403, "scope_invalid"},
		{"scope with a slash", []string{"x-rewind-scope", "a/b"}, 403, "scope_invalid"},
		{"scope too long", []string{"x-rewind-scope", strings.Repeat("a", 129)}, 403, "scope_invalid"},
		{"two scopes", []string{"x-rewind-scope", "a", "x-rewind-scope", "b"}, 403, "scope_invalid"},
		{"another tenant", []string{"x-rewind-tenant", "other"}, 403, "tenant_mismatch"},
		{"bad request id", []string{"x-rewind-request-id", "a b"}, 400, "request_id_invalid"},
	} {
		r := post(t, gw, "/v1/messages", messagesBody("x", false), append([]string{"x-api-key", key1}, c.headers...)...)
		var e struct {
			Type  string
			Error struct{ Type, Code, Message string }
		}
		if err := json.Unmarshal(r.body, &e); err != nil || r.status != c.status || e.Type != "error" || e.Error.Code != c.code || e.Error.Message == "" {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	if mock.Hits() != 0 {
		t.Errorf("refused requests reached the upstream: %d", mock.Hits())
	}
	// A valid scope is a separate record space: scope a's response is not scope b's.
	a1 := post(t, gw, "/v1/messages", messagesBody("x", false), "x-api-key", key1, "x-rewind-scope", "team-a:prod.1_x")
	b1 := post(t, gw, "/v1/messages", messagesBody("x", false), "x-api-key", key1, "x-rewind-scope", "team-b")
	a2 := post(t, gw, "/v1/messages", messagesBody("x", false), "x-api-key", key1, "x-rewind-scope", "team-a:prod.1_x")
	same := post(t, gw, "/v1/messages", messagesBody("x", false), "x-api-key", key1, "x-rewind-tenant", "acme")
	if a1.header.Get(HeaderReplay) != "miss" || b1.header.Get(HeaderReplay) != "miss" || a2.header.Get(HeaderReplay) != "hit" || same.header.Get(HeaderReplay) != "miss" {
		t.Errorf("scopes: a1 %s b1 %s a2 %s no-scope %s", a1.header.Get(HeaderReplay), b1.header.Get(HeaderReplay), a2.header.Get(HeaderReplay), same.header.Get(HeaderReplay))
	}
}

func TestCredentialIsolation(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	_, gw := startGateway(t, cfg)
	body := messagesBody("secret plans", false)
	a := post(t, gw, "/v1/messages", body, "x-api-key", "sk-ant-alice")
	b := post(t, gw, "/v1/messages", body, "x-api-key", "sk-ant-bob")
	bearer := post(t, gw, "/v1/messages", body, "authorization", "Bearer sk-ant-alice")
	a2 := post(t, gw, "/v1/messages", body, "x-api-key", "sk-ant-alice")
	if a.header.Get(HeaderReplay) != "miss" || b.header.Get(HeaderReplay) != "miss" || bearer.header.Get(HeaderReplay) != "miss" || a2.header.Get(HeaderReplay) != "hit" {
		t.Errorf("alice %s, bob %s, alice as bearer %s, alice again %s", a.header.Get(HeaderReplay), b.header.Get(HeaderReplay), bearer.header.Get(HeaderReplay), a2.header.Get(HeaderReplay))
	}
	if mock.Hits() != 3 {
		t.Errorf("upstream hits %d, want 3", mock.Hits())
	}
	// Without a credential the upstream refuses (401): an unsuccessful response is never
	// recorded, so the next call goes upstream again.
	for range 2 {
		if r := post(t, gw, "/v1/messages", body); r.status != 401 || r.header.Get(HeaderReplay) != "miss" {
			t.Errorf("no credential: %d %s", r.status, r.header.Get(HeaderReplay))
		}
	}
}

func TestCoalescing(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{EventDelay: 20 * time.Millisecond})
	if err := mock.Add([]byte(messagesBody("together", false)), []byte(recordedMessage)); err != nil {
		t.Fatal(err)
	}
	want, _ := mockanthropic.SSE([]byte(recordedMessage))
	cfg, _ := testConfig(t, mock.URL)
	_, gw := startGateway(t, cfg)
	const n = 8
	results := make([]call, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i] = post(t, gw, "/v1/messages", messagesBody("together", true), "x-api-key", key1) })
	}
	wg.Wait()
	hows := map[string]int{}
	for i, r := range results {
		hows[r.header.Get(HeaderReplay)]++
		if r.status != 200 || !bytes.Equal(r.body, want) {
			t.Errorf("request %d: %d, body differs from the upstream's stream: %q", i, r.status, r.body)
		}
	}
	if mock.Hits() != 1 || hows["miss"] != 1 {
		t.Errorf("%d identical requests cost %d upstream calls (%v), want 1", n, mock.Hits(), hows)
	}
}

func TestIncompleteStreamNotRecorded(t *testing.T) {
	full, _ := mockanthropic.SSE([]byte(recordedMessage))
	cut := full[:bytes.Index(full, []byte("event: message_delta"))]
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // a server notices a client leaving only once the body is read
		hits.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(cut) // ends cleanly, but without message_delta and message_stop
	}))
	defer up.Close()
	cfg, _ := testConfig(t, up.URL)
	_, gw := startGateway(t, cfg)
	for range 2 {
		r := post(t, gw, "/v1/messages", messagesBody("cut", true), "x-api-key", key1)
		if !bytes.Equal(r.body, cut) || r.header.Get(HeaderReplay) != "miss" {
			t.Errorf("%s %q", r.header.Get(HeaderReplay), r.body)
		}
	}
	if hits.Load() != 2 {
		t.Errorf("an incomplete stream was replayed: upstream hits %d", hits.Load())
	}
}

// TestClientDisconnectCancelsUpstream: when the client goes away mid-stream, the gateway's
// upstream request is cancelled (the upstream sees its request context end).
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // a server notices a client leaving only once the body is read
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write([]byte("event: ping\ndata: {\"type\":\"ping\"}\n\n"))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		close(cancelled)
	}))
	defer up.Close()
	for _, mode := range []string{"memory", "tape"} {
		t.Run(mode, func(t *testing.T) {
			started, cancelled = make(chan struct{}), make(chan struct{})
			cfg, _ := testConfig(t, up.URL)
			if mode == "tape" {
				tapeMode(t, cfg, "")
			}
			_, gw := startGateway(t, cfg)
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", gw+"/v1/messages", strings.NewReader(messagesBody("long", true)))
			req.Header.Set("x-api-key", key1)
			done := make(chan struct{})
			go func() {
				defer close(done)
				resp, err := testClient.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			<-started
			cancel()
			select {
			case <-cancelled:
			case <-time.After(30 * time.Second): // a bound for a hang, not a timing assertion
				t.Fatal("the upstream request was not cancelled after the client left")
			}
			<-done
		})
	}
}

func TestFlushesEachEvent(t *testing.T) {
	// The upstream sends one event and waits for the client to have read it before sending
	// the rest: a gateway that buffered the stream would deadlock here.
	read := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // a server notices a client leaving only once the body is read
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("event: message_start\ndata: {}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-read:
		case <-r.Context().Done():
			return
		}
		w.Write([]byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	}))
	defer up.Close()
	cfg, _ := testConfig(t, up.URL)
	_, gw := startGateway(t, cfg)
	req, _ := http.NewRequest("POST", gw+"/v1/messages", strings.NewReader(messagesBody("flush", true)))
	req.Header.Set("x-api-key", key1)
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len("event: message_start\ndata: {}\n\n"))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	close(read)
	rest, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(rest), "message_stop") {
		t.Errorf("rest %q", rest)
	}
}

func TestCachePreservationAndPruning(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	var lengths []int64
	mock := startMock(t, mockanthropic.Options{OnRequest: func(r *http.Request, b []byte) {
		mu.Lock()
		bodies = append(bodies, b)
		lengths = append(lengths, r.ContentLength)
		mu.Unlock()
	}})
	// Two tool calls whose results are lines lines of output each.
	agentBody := func(lines int) string {
		result := strings.Repeat("line of tool output\\n", lines)
		return `{"model":"claude-sonnet-5-5","max_tokens":64,"messages":[` +
			`{"role":"user","content":"run it"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"cmd":"go test"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"` + result + `"}]},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"cmd":"go test"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"` + result + `"}]}]}`
	}
	short := agentBody(40) // about 500 tokens: far below Sonnet 5's 1024-token minimum
	long := agentBody(400) // about 4,200 tokens

	for _, c := range []struct {
		name            string
		body            string
		profile         Profile
		prune           bool
		wantCache, same bool
		plan            string // X-Rewind-Cache-Plan
	}{
		{"compat forwards byte for byte", long, ProfileCompat, false, false, true, ""},
		{"lean adds a breakpoint", long, ProfileLean, false, true, false, "insert"},
		{"lean leaves a prompt too short to cache", short, ProfileLean, false, false, true, "below-minimum"},
		{"pruning alone", short, ProfileCompat, true, false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			bodies, lengths = nil, nil
			mu.Unlock()
			cfg, _ := testConfig(t, mock.URL)
			cfg.Profile.set(c.profile, SourceFlag, "--profile")
			cfg.PreserveCache.set(c.profile == ProfileLean, SourceProfile, "lean")
			cfg.PruneContext.set(c.prune, SourceFlag, "--prune-context")
			_, gw := startGateway(t, cfg)
			r := post(t, gw, "/v1/messages", c.body, "x-api-key", key1)
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if got := r.header.Get("X-Rewind-Cache-Plan"); got != c.plan {
				t.Errorf("X-Rewind-Cache-Plan %q, want %q", got, c.plan)
			}
			mu.Lock()
			defer mu.Unlock()
			got := bodies[0]
			if lengths[0] != int64(len(got)) {
				t.Errorf("Content-Length %d for a %d-byte body", lengths[0], len(got))
			}
			if bytes.Equal(got, []byte(c.body)) != c.same {
				t.Errorf("forwarded body unchanged = %v, want %v", !c.same, c.same)
			}
			if bytes.Contains(got, []byte(`"cache_control"`)) != c.wantCache {
				t.Errorf("cache_control in the forwarded body = %v, want %v", !c.wantCache, c.wantCache)
			}
			if c.prune && !bytes.Contains(got, []byte("agent-rewind: identical to the earlier tool result")) {
				t.Error("the repeated tool result was not pruned")
			}
		})
	}
}

func TestSavingsSurviveRestart(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	if err := mock.Add([]byte(messagesBody("save me", false)), []byte(recordedMessage)); err != nil {
		t.Fatal(err)
	}
	cfg, _ := testConfig(t, mock.URL)
	run := func(calls int) {
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		url, stop := serve(t, g)
		for range calls {
			post(t, url, "/v1/messages", messagesBody("save me", false), "x-api-key", key1)
		}
		stop()
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	run(3) // one miss, two replays
	s, err := LoadSavings(cfg.SavingsFile)
	if err != nil {
		t.Fatal(err)
	}
	if s.ReplayedCalls != 2 || s.AvoidedTokens != (Usage{Input: 240, Output: 80, CacheRead: 10000, CacheWrite: 2000}) {
		t.Fatalf("after the first run: %+v", s)
	}
	run(2) // memory was cleared: one miss, one replay
	s, err = LoadSavings(cfg.SavingsFile)
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultPrices["claude-sonnet-5-5"]
	wantCost := 3 * (120*p.Input + 40*p.Output + 1000*p.CacheWrite5m + 5000*p.CacheRead) / 1e6
	if s.ReplayedCalls != 3 || s.AvoidedTokens.Input != 360 || fmt.Sprintf("%.9f", s.AvoidedCostUSD) != fmt.Sprintf("%.9f", wantCost) {
		t.Errorf("after the restart: %+v, want 3 calls costing %f", s, wantCost)
	}
	if s.Note != SavingsNote || s.ByModel["claude-sonnet-5-5"].ReplayedCalls != 3 || mock.Hits() != 2 {
		t.Errorf("receipt %+v, upstream hits %d", s, mock.Hits())
	}
	// The history's newest point holds the totals the receipt ends with.
	if n := len(s.History); n == 0 || n > 2 || s.History[n-1].ReplayedCalls != 3 || s.History[n-1].AvoidedCostUSD != s.AvoidedCostUSD {
		t.Errorf("history %+v, want its last point at the totals (3 calls)", s.History)
	}
}

func TestNoStateDirectoryWithoutSavings(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	prepared := false
	cfg.Prepare = func() error { prepared = true; return nil }
	g, url := startGateway(t, cfg)
	post(t, url, "/v1/messages", messagesBody("once", false), "x-api-key", key1)
	if err := g.ledger.flush(); err != nil {
		t.Fatal(err)
	}
	if prepared {
		t.Error("the gateway prepared the state directory with nothing to write")
	}
}

func TestUpstreamUnreachable(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	url := up.URL
	up.Close()
	cfg, _ := testConfig(t, url)
	_, gw := startGateway(t, cfg)
	r := post(t, gw, "/v1/messages", messagesBody("x", false), "x-api-key", key1)
	if r.status != 502 || !bytes.Contains(r.body, []byte("upstream_unreachable")) {
		t.Errorf("%d %s", r.status, r.body)
	}
}

func TestSavingsWithFilePrices(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	if err := mock.Add([]byte(messagesBody("priced", false)), []byte(recordedMessage)); err != nil {
		t.Fatal(err)
	}
	cfg, _ := testConfig(t, mock.URL)
	custom := Price{Input: 1, Output: 1, CacheWrite5m: 1, CacheWrite1h: 1, CacheRead: 1}
	cfg.Prices.set(DefaultPrices.merged(PriceTable{"claude-sonnet-5-5": custom}), SourceFile, "gateway.json: prices")
	g, url, stop := startStoppable(t, cfg)
	for range 2 {
		post(t, url, "/v1/messages", messagesBody("priced", false), "x-api-key", key1)
	}
	stop()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSavings(cfg.SavingsFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(120+40+1000+5000) / 1e6; s.AvoidedCostUSD != want || len(s.Prices.Overridden) != 1 || s.Prices.Overridden[0] != "claude-sonnet-5-5" {
		t.Errorf("cost %g (want %g), overridden %v", s.AvoidedCostUSD, want, s.Prices.Overridden)
	}
}
