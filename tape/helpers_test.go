package tape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// testKeyHex is a fixed test key; testKey is its bytes.
const testKeyHex = "8f2c1a4e9b7d3f60a5c8e1b2d4f6a8c0e2b4d6f8a0c2e4f6b8d0a2c4e6f8b0d2"

var testKey = mustKey(testKeyHex)

func mustKey(s string) []byte {
	k, err := ParseKey(s)
	if err != nil {
		panic(err)
	}
	return k
}

// openTest opens tenant "acme" under dir with the test key.
func openTest(t testing.TB, dir string) *Tape {
	t.Helper()
	tp, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme", Key: testKey})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { tp.Close() })
	return tp
}

// req is the n-th distinct test request; secret is an API key that must never reach the disk.
func req(n int) Request {
	return Request{
		Method: "POST",
		Path:   "/v1/messages",
		Header: http.Header{
			"Anthropic-Version": {"2023-06-01"},
			"X-Api-Key":         {"sk-ant-secret-credential"},
			"Content-Type":      {"application/json"},
		},
		Body: fmt.Appendf(nil, `{"model":"claude-test","max_tokens":64,"messages":[{"role":"user","content":"plaintext-prompt-%d"}]}`, n),
	}
}

// resp is the response to req(n).
func resp(n int) Response {
	return Response{
		Status: 200,
		Header: http.Header{"Content-Type": {"application/json"}, "Request-Id": {fmt.Sprintf("req_%d", n)}},
		Body:   fmt.Appendf(nil, `{"content":[{"type":"text","text":"plaintext-answer-%d"}]}`, n),
	}
}

func call(n int) Call { return Call{Request: req(n), Response: resp(n)} }

// recordN records calls 0..n-1 into epoch.
func recordN(t testing.TB, tp *Tape, epoch string, n int) {
	t.Helper()
	r, err := tp.Recorder(epoch)
	if err != nil {
		t.Fatalf("Recorder(%q): %v", epoch, err)
	}
	defer r.Close()
	for i := range n {
		pos, err := r.Record(context.Background(), call(i))
		if err != nil {
			t.Fatalf("Record %d: %v", i, err)
		}
		if pos != int64(i) {
			t.Fatalf("Record %d: position %d", i, pos)
		}
	}
}

// wantServed checks that a replay served recorded call n at position n.
func wantServed(t testing.TB, got Replayed, err error, n int) {
	t.Helper()
	if err != nil {
		t.Fatalf("Next for call %d: %v", n, err)
	}
	want := resp(n)
	if got.Position != int64(n) || got.Response.Status != want.Status || !bytes.Equal(got.Response.Body, want.Body) ||
		got.Response.Header.Get("Request-Id") != want.Header.Get("Request-Id") {
		t.Fatalf("Next for call %d: got position %d, %d %q", n, got.Position, got.Response.Status, got.Response.Body)
	}
}

// wantErr fails unless err matches target and none of the other sentinels in others.
func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want %v", err, target)
	}
	for _, s := range []error{ErrKeyMissing, ErrKeyMalformed, ErrWrongKey, ErrCorrupt, ErrTampered, ErrNewerFormat} {
		if s != target && errors.Is(err, s) {
			t.Fatalf("error %v also matches %v", err, s)
		}
	}
	if strings.Contains(err.Error(), testKeyHex) {
		t.Fatalf("error reveals the key: %v", err)
	}
}
