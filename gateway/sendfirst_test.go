package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// flushHook is a ResponseWriter that calls onFlush at its first Flush.
type flushHook struct {
	*httptest.ResponseRecorder
	onFlush func()
	flushed bool
}

func (f *flushHook) Flush() {
	if !f.flushed {
		f.flushed = true
		f.onFlush()
	}
	f.ResponseRecorder.Flush()
}

// TestMemoryResponseSentBeforeRecorded: a forwarded response of known length reaches its client
// before the gateway records it for memory replay (recording parses it, which held the whole
// response back), and a request for the same call made in between is answered from the record,
// a hit, without a second upstream call.
func TestMemoryResponseSentBeforeRecorded(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const body = `{"model":"claude-sonnet-5-5","max_tokens":16,"messages":[{"role":"user","content":"Send first."}]}`
	req := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body))
		r.Header.Set("x-api-key", key1)
		r.Header.Set("anthropic-version", "2023-06-01")
		return r
	}
	var recordsAtFlush int
	second := httptest.NewRecorder()
	done := make(chan struct{})
	first := &flushHook{ResponseRecorder: httptest.NewRecorder(), onFlush: func() {
		recordsAtFlush = g.mem.len()
		go func() { // the same call, while the first response is being recorded
			defer close(done)
			g.ServeHTTP(second, req())
		}()
	}}
	g.ServeHTTP(first, req())
	if !first.flushed {
		t.Fatal("the response was not sent before the handler returned: it waited for its record")
	}
	<-done
	if recordsAtFlush != 0 {
		t.Errorf("%d records when the response was sent: want it sent before it is recorded", recordsAtFlush)
	}
	if first.Code != 200 || first.Header().Get(HeaderReplay) != "miss" {
		t.Fatalf("first: %d %q: %s", first.Code, first.Header().Get(HeaderReplay), first.Body)
	}
	if second.Code != 200 || second.Header().Get(HeaderReplay) != "hit" || second.Body.String() != first.Body.String() {
		t.Errorf("second: %d %q, body %q: want a hit with the first's body %q", second.Code, second.Header().Get(HeaderReplay), second.Body, first.Body)
	}
	if n := mock.Hits(); n != 1 {
		t.Errorf("the upstream answered %d calls: want 1", n)
	}
	if g.mem.len() != 1 {
		t.Errorf("%d records after the call: want 1", g.mem.len())
	}
}

// TestMemoryLookupWaitsForPending: a lookup of a response being recorded returns its record
// once it is in, and nothing when it could not be recorded.
func TestMemoryLookupWaitsForPending(t *testing.T) {
	s := newMemoryStore(MaxMemoryTotal)
	for _, recorded := range []bool{true, false} {
		var k [32]byte
		if recorded {
			k[0] = 1
		}
		p := s.begin(k)
		if p == nil || s.begin(k) != nil {
			t.Fatal("begin: want one pending response a key")
		}
		got := make(chan bool)
		go func() {
			_, ok := s.lookup(k)
			got <- ok
		}()
		var e *entry
		if recorded {
			e = &entry{key: k, size: 600}
		}
		s.finish(k, p, e)
		if ok := <-got; ok != recorded {
			t.Errorf("recorded %v: lookup found %v", recorded, ok)
		}
		if _, ok := s.lookup(k); ok != recorded {
			t.Errorf("recorded %v: a later lookup found %v", recorded, ok)
		}
	}
}
