package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestMockChild checks the gateway suites' upstream: a child process ("bench mock", here the
// test binary standing in through TestMain) that answers Messages calls, streams, counts its
// hits, and says in a header when it had each request.
func TestMockChild(t *testing.T) {
	ctx := context.Background()
	m, err := startMock(ctx, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop()
	if m.cmd.Process.Pid == 0 {
		t.Fatal("the mock upstream is not a child process")
	}
	c := newBenchClient()
	for _, stream := range []bool{false, true} {
		body := []byte(`{"model":"claude-sonnet-5-5","max_tokens":8,"stream":` + map[bool]string{false: "false", true: "true"}[stream] + `,"messages":[{"role":"user","content":"hi"}]}`)
		x, err := postMessages(ctx, c, m.URL, body)
		if err != nil {
			t.Fatal(err)
		}
		if stream && !streamComplete(x.Body) {
			t.Errorf("stream without message_stop: %s", x.Body)
		}
		if x.Arrived.IsZero() {
			t.Fatalf("no %s header on the response", headerArrived)
		}
		if x.Arrived.Before(x.Sent.Add(-time.Second)) || x.Arrived.After(time.Now().Add(time.Second)) {
			t.Errorf("arrived %v: not between the send (%v) and now", x.Arrived, x.Sent)
		}
	}
	if n, err := m.Hits(ctx); err != nil || n != 2 {
		t.Errorf("hits %d, %v: want 2", n, err)
	}
}

// TestFloorChildren checks the floors the SSE figures are compared with: "bench proxy" and
// "bench relay" pass a stream from the child mock whole, with the mock's arrival header.
func TestFloorChildren(t *testing.T) {
	ctx := context.Background()
	m, err := startMock(ctx, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop()
	c := newBenchClient()
	for _, kind := range []string{"proxy", "relay"} {
		f, err := startChild(ctx, kind, "--upstream", m.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer f.stop()
		x, err := postMessages(ctx, c, f.URL, []byte(`{"model":"claude-sonnet-5-5","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if !streamComplete(x.Body) || x.Arrived.IsZero() {
			t.Errorf("%s: stream complete %v, arrival header %v: %s", kind, streamComplete(x.Body), x.Arrived, x.Body)
		}
	}
	if _, err := startChild(ctx, "proxy", "--upstream", "nowhere"); err == nil {
		t.Error("bench proxy started with an upstream that is not a URL")
	}
}

// TestTLSMockChild checks the HTTPS arm's upstream: "bench mock" serving TLS with a throwaway
// certificate, which a client trusting only that certificate reaches.
func TestTLSMockChild(t *testing.T) {
	ctx := context.Background()
	cert, err := newThrowawayCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := startTLSMock(ctx, time.Millisecond, cert)
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop()
	if !strings.HasPrefix(m.URL, "https://127.0.0.1:") {
		t.Fatalf("the mock says it listens at %s, want https://127.0.0.1:PORT", m.URL)
	}
	x, err := postMessages(ctx, cert.client(), m.URL, []byte(`{"model":"claude-sonnet-5-5","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || !streamComplete(x.Body) {
		t.Fatalf("a stream over TLS: %v: %s", err, x.Body)
	}
	if _, err := postMessages(ctx, newBenchClient(), m.URL, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the throwaway root: %v; want a certificate error", err)
	}
}
