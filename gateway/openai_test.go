package gateway

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

const openAIKey = "Bearer sk-openai-test-one"

// openAICase is one OpenAI API in one wire form.
type openAICase struct {
	name, path string
	body       func(text string) string
}

func openAICases() []openAICase {
	return []openAICase{
		{"responses/json", "/v1/responses", func(s string) string {
			return `{"model":"gpt-5","store":false,"input":[{"role":"user","content":"` + s + `"}]}`
		}},
		{"responses/sse", "/v1/responses", func(s string) string {
			return `{"model":"gpt-5","store":false,"stream":true,"input":"` + s + `"}`
		}},
		{"chat/json", "/v1/chat/completions", func(s string) string {
			return `{"model":"gpt-5","messages":[{"role":"user","content":"` + s + `"}]}`
		}},
		{"chat/sse", "/v1/chat/completions", func(s string) string {
			return `{"model":"gpt-5","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"` + s + `"}]}`
		}},
	}
}

// Both OpenAI APIs, JSON and streamed, are replayed byte for byte from memory under the same
// key rules as Messages: another credential, another organization or project, or another
// scope misses.
func TestOpenAIReplay(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	_, url := startGateway(t, cfg)
	for _, c := range openAICases() {
		t.Run(c.name, func(t *testing.T) {
			body := c.body("replay " + c.name)
			first := post(t, url, c.path, body, "authorization", openAIKey)
			if first.status != 200 || first.header.Get(HeaderReplay) != "miss" {
				t.Fatalf("first: %d %s %s", first.status, first.header.Get(HeaderReplay), first.body)
			}
			hits := mock.PathHits(c.path)
			// Member order and whitespace do not matter: the body's canonical JSON is keyed.
			again := post(t, url, c.path, " "+body+"\n", "authorization", openAIKey)
			if again.status != 200 || again.header.Get(HeaderReplay) != "hit" || !bytes.Equal(again.body, first.body) {
				t.Fatalf("repeat: %d %s, identical %v", again.status, again.header.Get(HeaderReplay), bytes.Equal(again.body, first.body))
			}
			if got := again.header.Get("Content-Type"); got != first.header.Get("Content-Type") {
				t.Errorf("replayed Content-Type %q, upstream's %q", got, first.header.Get("Content-Type"))
			}
			if mock.PathHits(c.path) != hits {
				t.Fatalf("the repeat reached the upstream")
			}
			for _, other := range [][]string{
				{"authorization", "Bearer sk-openai-test-two"},
				{"authorization", openAIKey, "openai-organization", "org-other"},
				{"authorization", openAIKey, "openai-project", "proj_other"},
				{"authorization", openAIKey, "openai-beta", "responses=v9"},
				{"authorization", openAIKey, "x-rewind-scope", "other-scope"},
			} {
				r := post(t, url, c.path, body, other...)
				if r.status != 200 || r.header.Get(HeaderReplay) != "miss" {
					t.Errorf("%v: %d %s, want a miss", other, r.status, r.header.Get(HeaderReplay))
				}
			}
			if want := hits + 5; mock.PathHits(c.path) != want {
				t.Errorf("upstream calls %d, want %d", mock.PathHits(c.path), want)
			}
		})
	}
}

// What must never be replayed is forwarded every time, says why in X-Rewind-Bypass, and is
// not recorded.
func TestOpenAINeverReplayed(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	_, url := startGateway(t, cfg)
	for _, c := range []struct{ path, body, why string }{
		{"/v1/responses", `{"model":"gpt-5","input":"stored by default"}`, "store"},
		{"/v1/responses", `{"model":"gpt-5","store":true,"input":"stored"}`, "store"},
		{"/v1/responses", `{"model":"gpt-5","store":false,"previous_response_id":"resp_1","input":"go on"}`, "previous_response_id"},
		{"/v1/responses", `{"model":"gpt-5","store":false,"conversation":"conv_1","input":"go on"}`, "conversation"},
		{"/v1/responses", `{"model":"gpt-5","store":false,"conversation":{"id":"conv_1"},"input":"go on"}`, "conversation"},
		{"/v1/responses", `{"model":"gpt-5","store":false,"background":true,"input":"later"}`, "background"},
		{"/v1/responses", `{"model":"gpt-5","st\u006fre":false,"store":true,"input":"last member wins"}`, "store"},
		{"/v1/chat/completions", `{"model":"gpt-5","store":true,"messages":[{"role":"user","content":"stored"}]}`, "store"},
	} {
		before := mock.PathHits(c.path)
		for i := range 2 {
			r := post(t, url, c.path, c.body, "authorization", openAIKey)
			if r.status != 200 || r.header.Get(HeaderReplay) != "bypass" || r.header.Get(HeaderBypass) != c.why {
				t.Errorf("%s call %d: %d %s %q, want bypass %q", c.body, i, r.status, r.header.Get(HeaderReplay), r.header.Get(HeaderBypass), c.why)
			}
		}
		if got := mock.PathHits(c.path) - before; got != 2 {
			t.Errorf("%s: %d upstream calls, want 2", c.body, got)
		}
	}
	// Explicit nulls say nothing: these are replayed.
	body := `{"model":"gpt-5","store":false,"previous_response_id":null,"conversation":null,"background":false,"input":"fresh"}`
	post(t, url, "/v1/responses", body, "authorization", openAIKey)
	if r := post(t, url, "/v1/responses", body, "authorization", openAIKey); r.header.Get(HeaderReplay) != "hit" {
		t.Errorf("nulls: %s, want a hit", r.header.Get(HeaderReplay))
	}
	// Tool outputs that differ only in their call ids are different calls: the answer may
	// name the call ids, so one is never served for the other.
	withCall := func(id string) string {
		return `{"model":"gpt-5","store":false,"input":[{"role":"user","content":"ls"},` +
			`{"type":"function_call","call_id":"` + id + `","name":"shell","arguments":"{}"},` +
			`{"type":"function_call_output","call_id":"` + id + `","output":"a.txt"}]}`
	}
	post(t, url, "/v1/responses", withCall("call_a"), "authorization", openAIKey)
	if r := post(t, url, "/v1/responses", withCall("call_b"), "authorization", openAIKey); r.header.Get(HeaderReplay) != "miss" {
		t.Errorf("other call id: %s, want a miss", r.header.Get(HeaderReplay))
	}
	// Polling a background response, and anything else, passes through to the upstream.
	before := mock.PathHits("/v1/responses/{id}")
	for range 2 {
		req := get(t, url, "/v1/responses/resp_1", "authorization", openAIKey)
		if req.status != 404 || req.header.Get(HeaderReplay) != "" {
			t.Errorf("GET /v1/responses/resp_1: %d %q, want the upstream's 404", req.status, req.header.Get(HeaderReplay))
		}
	}
	if got := mock.PathHits("/v1/responses/{id}") - before; got != 2 {
		t.Errorf("polling reached the upstream %d times, want 2", got)
	}
}

// A response that did not complete (failed, or a stream ending in an error) is never
// recorded: the next identical call goes upstream.
func TestOpenAIFailedNotRecorded(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	_, url := startGateway(t, cfg)
	for _, c := range []struct{ path, body string }{
		{"/v1/responses", `{"model":"mock-fail","store":false,"input":"x"}`},
		{"/v1/responses", `{"model":"mock-fail","store":false,"stream":true,"input":"x"}`},
		{"/v1/chat/completions", `{"model":"mock-fail","stream":true,"messages":[{"role":"user","content":"x"}]}`},
	} {
		before := mock.PathHits(c.path)
		for range 2 {
			if r := post(t, url, c.path, c.body, "authorization", openAIKey); r.header.Get(HeaderReplay) != "miss" {
				t.Errorf("%s: %s, want a miss each time", c.body, r.header.Get(HeaderReplay))
			}
		}
		if got := mock.PathHits(c.path) - before; got != 2 {
			t.Errorf("%s: %d upstream calls, want 2", c.body, got)
		}
	}
}

// Replays of OpenAI calls are priced from their usage: cached tokens as cache reads,
// reasoning within output; a Chat stream without usage is counted unpriced.
func TestOpenAISavings(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	g, url := startGateway(t, cfg)
	long := strings.Repeat("stable prefix ", 400) // over 1024 tokens: the mock reports a cached part
	var want Usage
	for _, c := range openAICases() {
		body := c.body(long)
		first := post(t, url, c.path, body, "authorization", openAIKey)
		_, u, ok := responseUsage(apiPaths[c.path], strings.Contains(c.name, "sse"), first.body)
		if !ok || u.CacheRead == 0 || u.Reasoning != 2 || u.Output != 5 {
			t.Fatalf("%s: usage %+v ok %v", c.name, u, ok)
		}
		want.add(u)
		post(t, url, c.path, body, "authorization", openAIKey)
	}
	noUsage := `{"model":"gpt-5","stream":true,"messages":[{"role":"user","content":"no usage"}]}`
	post(t, url, "/v1/chat/completions", noUsage, "authorization", openAIKey)
	if r := post(t, url, "/v1/chat/completions", noUsage, "authorization", openAIKey); r.header.Get(HeaderReplay) != "hit" {
		t.Fatalf("a Chat stream without usage: %s, want a hit", r.header.Get(HeaderReplay))
	}
	if err := g.ledger.flush(); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSavings(cfg.SavingsFile)
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultPrices["gpt-5"]
	cost := (float64(want.Input)*p.Input + float64(want.CacheRead)*p.CacheRead + float64(want.Output)*p.Output) / 1e6
	if s.ReplayedCalls != 5 || s.UnpricedCalls != 1 || s.AvoidedTokens != want || math.Abs(s.AvoidedCostUSD-cost) > 1e-12 {
		t.Errorf("receipt %+v, want 5 calls (1 unpriced), tokens %+v, cost %g", s, want, cost)
	}
}

func TestOpenAIPriceLookup(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-4o-2024-08-06": true, "gpt-5": true, "gpt-5-2025-08-07": true,
		"gpt-5-pro": false, "gpt-4o-2024-8-06": false, "gpt-4o-2024-08-0x": false, "-2024-08-06": false,
	} {
		if _, ok := DefaultPrices.Lookup(model); ok != want {
			t.Errorf("Lookup(%q) priced %v, want %v", model, ok, want)
		}
	}
}

// Opt-in pruning reaches OpenAI bodies: a repeated function_call_output is replaced.
func TestOpenAIPruning(t *testing.T) {
	var seen []byte
	mock := startMock(t, mockanthropic.Options{OnRequest: func(_ *http.Request, body []byte) { seen = bytes.Clone(body) }})
	cfg, _ := testConfig(t, mock.URL)
	cfg.PruneContext.set(true, SourceFlag, "--prune-context")
	_, url := startGateway(t, cfg)
	out := strings.Repeat("file contents ", 40)
	body := `{"model":"gpt-5","store":false,"input":[` +
		`{"type":"function_call","call_id":"c1","name":"read","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"` + out + `"},` +
		`{"type":"function_call","call_id":"c2","name":"read","arguments":"{}"},{"type":"function_call_output","call_id":"c2","output":"` + out + `"}]}`
	r := post(t, url, "/v1/responses", body, "authorization", openAIKey)
	if r.status != 200 || r.header.Get("X-Rewind-Pruned") != "1" || bytes.Count(seen, []byte(out)) != 1 {
		t.Fatalf("%d pruned %q; the upstream saw the output %d times", r.status, r.header.Get("X-Rewind-Pruned"), bytes.Count(seen, []byte(out)))
	}
}

// The tape records OpenAI calls in order and replays them across a restart with the upstream
// gone: request-id retries, 409 on a strict miss; a background response is never on it.
func TestOpenAITape(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	tapeMode(t, cfg, "")
	cases := openAICases()
	// Stateful calls are on the tape too: replayed in order, the ids they name are the
	// recorded ones.
	chained := `{"model":"gpt-5","previous_response_id":"resp_1","input":"go on"}`
	g, url, stop := startStoppable(t, cfg)
	var recorded []call
	for i, c := range cases {
		r := post(t, url, c.path, c.body("tape"), "authorization", openAIKey)
		if r.status != 200 || r.header.Get(HeaderReplay) != "recorded" || r.header.Get(HeaderTapePosition) != strconv.Itoa(i) {
			t.Fatalf("record %s: %d %s pos %s: %s", c.name, r.status, r.header.Get(HeaderReplay), r.header.Get(HeaderTapePosition), r.body)
		}
		recorded = append(recorded, r)
	}
	if r := post(t, url, "/v1/responses", chained, "authorization", openAIKey); r.header.Get(HeaderTapePosition) != "4" {
		t.Fatalf("record the chained call: %d %s", r.status, r.header.Get(HeaderReplay))
	}
	bg := `{"model":"gpt-5","background":true,"input":"later"}`
	if r := post(t, url, "/v1/responses", bg, "authorization", openAIKey); r.header.Get(HeaderReplay) != "unrecorded" || r.header.Get(HeaderBypass) != "background" {
		t.Fatalf("background while recording: %s %s", r.header.Get(HeaderReplay), r.header.Get(HeaderBypass))
	}
	// A client that labels each session afresh (Codex CLI) replays its recording: the labels
	// are stored but not matched.
	labelled := func(session string) string {
		return `{"model":"gpt-5","store":false,"prompt_cache_key":"` + session + `","input":[{"id":"msg_` + session + `","type":"message","role":"user","content":"hi"}]}`
	}
	if r := post(t, url, "/v1/responses", labelled("s1"), "authorization", openAIKey); r.header.Get(HeaderTapePosition) != "5" {
		t.Fatalf("record the labelled call: %d %s %s", r.status, r.header.Get(HeaderReplay), r.header.Get(HeaderTapePosition))
	}
	stop()
	g.Close()
	mock.Close() // the upstream is gone: everything must come from the tape

	replayCfg, _ := testConfig(t, mock.URL)
	replayCfg.StorageDirectory = cfg.StorageDirectory
	tapeMode(t, replayCfg, "review-1")
	_, url2, _ := startStoppable(t, replayCfg)
	for i, c := range cases {
		id := fmt.Sprintf("call-%d", i)
		r := post(t, url2, c.path, c.body("tape"), "authorization", openAIKey, "x-rewind-request-id", id)
		if r.status != 200 || r.header.Get(HeaderReplay) != "tape" || !bytes.Equal(r.body, recorded[i].body) {
			t.Fatalf("replay %s: %d %s identical %v: %s", c.name, r.status, r.header.Get(HeaderReplay), bytes.Equal(r.body, recorded[i].body), r.body)
		}
		retry := post(t, url2, c.path, c.body("tape"), "authorization", openAIKey, "x-rewind-request-id", id)
		if retry.header.Get(HeaderReplay) != "tape-retry" || !bytes.Equal(retry.body, recorded[i].body) {
			t.Fatalf("retry %s: %s", c.name, retry.header.Get(HeaderReplay))
		}
		if i == 0 {
			if miss := post(t, url2, "/v1/responses", cases[3].body("tape"), "authorization", openAIKey); miss.status != 409 || !bytes.Contains(miss.body, []byte("tape_strict_miss")) {
				t.Fatalf("out of order: %d %s", miss.status, miss.body)
			}
		}
	}
	if r := post(t, url2, "/v1/responses", chained, "authorization", openAIKey); r.status != 200 || r.header.Get(HeaderReplay) != "tape" {
		t.Fatalf("the chained call: %d %s", r.status, r.body)
	}
	if r := post(t, url2, "/v1/responses", labelled("s2"), "authorization", openAIKey); r.status != 200 || r.header.Get(HeaderReplay) != "tape" || r.header.Get(HeaderTapePosition) != "5" {
		t.Fatalf("the labelled call in another session: %d %s", r.status, r.body)
	}
	if r := post(t, url2, "/v1/responses", bg, "authorization", openAIKey); r.status != 405 || !bytes.Contains(r.body, []byte("replay_refused")) {
		t.Fatalf("background while replaying: %d %s", r.status, r.body)
	}
}

// Team mode: an OpenAI call recorded through one replica is replayed by another; a call that
// is never replayed still has its key checked, so a revoked key is refused before any
// upstream call.
func TestOpenAITeam(t *testing.T) {
	url, s := teamDB(t)
	id, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	a := teamReplica(t, mock.URL, url, nil)
	b := teamReplica(t, mock.URL, url, nil)
	for _, c := range openAICases() {
		body := c.body("team " + c.name)
		first := post(t, a, c.path, body, "authorization", openAIKey, "x-rewind-key", key)
		if first.status != 200 || first.header.Get(HeaderReplay) != "miss" {
			t.Fatalf("%s through A: %d %s %s", c.name, first.status, first.header.Get(HeaderReplay), first.body)
		}
		hits := mock.Hits()
		second := post(t, b, c.path, body, "authorization", openAIKey, "x-rewind-key", key)
		if second.status != 200 || second.header.Get(HeaderReplay) != "hit" || !bytes.Equal(second.body, first.body) || mock.Hits() != hits {
			t.Fatalf("%s through B: %d %s, identical %v, upstream calls %d (want %d)", c.name, second.status, second.header.Get(HeaderReplay), bytes.Equal(second.body, first.body), mock.Hits(), hits)
		}
	}
	stored := `{"model":"gpt-5","input":"stored"}`
	for _, r := range []string{a, b} { // each replica learns the key
		if c := post(t, r, "/v1/responses", stored, "authorization", openAIKey, "x-rewind-key", key); c.header.Get(HeaderReplay) != "bypass" {
			t.Fatalf("a stored response: %d %s", c.status, c.header.Get(HeaderReplay))
		}
	}
	if err := s.RevokeKey(context.Background(), "acme", id); err != nil {
		t.Fatal(err)
	}
	hits := mock.Hits()
	for _, r := range []string{a, b} {
		for _, body := range []string{stored, openAICases()[0].body("team responses/json")} {
			if c := post(t, r, "/v1/responses", body, "authorization", openAIKey, "x-rewind-key", key); c.status != 401 {
				t.Fatalf("after revoking: %d %s, want 401", c.status, c.body)
			}
		}
	}
	if mock.Hits() != hits {
		t.Fatalf("a revoked key made %d upstream calls", mock.Hits()-hits)
	}
}

// A response a client has received whole is replayable on every replica at once: each call
// through replica A, the moment its response has ended, is a hit on replica B, for small and
// large (over the server's 4 KiB write buffer) bodies, JSON and streamed, for every API.
func TestTeamNoReplicaPaysAgain(t *testing.T) {
	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	big := strings.Repeat("long answer ", 2000)
	a := teamReplica(t, mock.URL, url, nil)
	b := teamReplica(t, mock.URL, url, nil)
	for i := range 20 {
		bodies := map[string]string{
			"/v1/messages": messagesBody(fmt.Sprint("race ", i), i%2 == 1),
		}
		if i%4 == 0 {
			req := messagesBody(fmt.Sprint("race ", i, " large"), false)
			msg := `{"id":"msg_big","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[{"type":"text","text":"` + big + `"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":5}}`
			if err := mock.Add([]byte(req), []byte(msg)); err != nil {
				t.Fatal(err)
			}
			bodies["/v1/messages"] = req
		}
		c := openAICases()[i%4]
		bodies[c.path] = c.body(fmt.Sprint("race ", i))
		for path, body := range bodies {
			first := post(t, a, path, body, "authorization", openAIKey, "x-api-key", key1, "x-rewind-key", key)
			hits := mock.Hits()
			second := post(t, b, path, body, "authorization", openAIKey, "x-api-key", key1, "x-rewind-key", key)
			if first.header.Get(HeaderReplay) != "miss" || second.header.Get(HeaderReplay) != "hit" || mock.Hits() != hits || !bytes.Equal(first.body, second.body) {
				t.Fatalf("%s %d: A %s, then B %s (upstream calls +%d): B paid again for a response the client had", path, i, first.header.Get(HeaderReplay), second.header.Get(HeaderReplay), mock.Hits()-hits)
			}
		}
	}
}

// tailWriter holds the last byte of a body of known length until release, and nothing of
// one of unknown length.
func TestTailWriter(t *testing.T) {
	for _, known := range []bool{true, false} {
		rec := httptest.NewRecorder()
		if known {
			rec.Header().Set("Content-Length", "6")
		}
		tw := &tailWriter{ResponseWriter: rec}
		tw.Write([]byte("abc"))
		tw.Write(nil)
		tw.Write([]byte("def"))
		tw.Flush()
		want := "abcdef"
		if known {
			want = "abcde"
		}
		if rec.Body.String() != want {
			t.Errorf("known length %v: before release %q, want %q", known, rec.Body.String(), want)
		}
		tw.release()
		tw.Write([]byte("!"))
		if rec.Body.String() != "abcdef!" {
			t.Errorf("known length %v: after release %q", known, rec.Body.String())
		}
	}
}

// prompt_cache_key and client_metadata (set afresh by clients for every session) do not
// take part in the replay key; metadata, user and safety_identifier do.
func TestOpenAIKeyIgnoresSessionLabels(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	_, url := startGateway(t, cfg)
	session := func(id, extra string) string {
		return `{"model":"gpt-5","store":false,"prompt_cache_key":"` + id + `","input":"hi","client_metadata":{"session_id":"` + id + `"}` + extra + `}`
	}
	for _, path := range []string{"/v1/responses", "/v1/chat/completions"} {
		post(t, url, path, session("s1", ""), "authorization", openAIKey)
		if r := post(t, url, path, session("s2", ""), "authorization", openAIKey); r.header.Get(HeaderReplay) != "hit" {
			t.Errorf("%s: another session's labels: %s, want a hit", path, r.header.Get(HeaderReplay))
		}
		for _, extra := range []string{`,"metadata":{"k":"v"}`, `,"user":"u2"`, `,"safety_identifier":"u2"`} {
			if r := post(t, url, path, session("s3", extra), "authorization", openAIKey); r.header.Get(HeaderReplay) != "miss" {
				t.Errorf("%s with %s: %s, want a miss", path, extra, r.header.Get(HeaderReplay))
			}
		}
	}
}

// The team tape records OpenAI calls through one replica and replays them in order through
// another, matching a later session's labels, without the upstream; a background response is
// refused while replaying.
func TestOpenAITeamTape(t *testing.T) {
	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	epoch := func(c *Config) { c.Epoch.set("openai-1", SourceFlag, "--epoch") }
	cursor := func(c *Config) { epoch(c); c.ReplayCursor.set("ci", SourceFlag, "--replay-cursor") }
	rec, rep := teamReplica(t, mock.URL, url, epoch), teamReplica(t, mock.URL, url, cursor)
	body := func(c openAICase, session string) string {
		b := c.body("team tape " + c.name)
		return b[:len(b)-1] + `,"prompt_cache_key":"` + session + `"}`
	}
	var recorded []call
	for i, c := range openAICases() {
		r := post(t, rec, c.path, body(c, "s1"), "authorization", openAIKey, "x-rewind-key", key)
		if r.status != 200 || r.header.Get(HeaderReplay) != "recorded" || r.header.Get(HeaderTapePosition) != strconv.Itoa(i) {
			t.Fatalf("record %s: %d %s %s", c.name, r.status, r.header.Get(HeaderReplay), r.body)
		}
		recorded = append(recorded, r)
	}
	hits := mock.Hits()
	for i, c := range openAICases() {
		r := post(t, rep, c.path, body(c, "s2"), "authorization", openAIKey, "x-rewind-key", key)
		if r.status != 200 || r.header.Get(HeaderReplay) != "tape" || !bytes.Equal(r.body, recorded[i].body) {
			t.Fatalf("replay %s: %d %s %s", c.name, r.status, r.header.Get(HeaderReplay), r.body)
		}
	}
	if r := post(t, rep, "/v1/responses", `{"model":"gpt-5","background":true,"input":"x"}`, "authorization", openAIKey, "x-rewind-key", key); r.status != 405 {
		t.Fatalf("background while replaying: %d %s", r.status, r.body)
	}
	if mock.Hits() != hits {
		t.Fatal("replaying called the upstream")
	}
}
