package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"sync"
	"testing"

	"github.com/agent-rewind/rewind/tape"
)

// replayKeyByDefinition is the replay key as replayKey's comment defines it, computed the
// plain way (a fresh HMAC, one hash over the whole input).
func replayKeyByDefinition(credKey []byte, r *http.Request, body []byte, tenant, scope string) [32]byte {
	str := func(b []byte, s string) []byte { return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...) }
	mac := hmac.New(sha256.New, credKey)
	for _, name := range credentialHeaders {
		b := str(nil, name)
		b = binary.BigEndian.AppendUint32(b, uint32(len(r.Header[name])))
		for _, v := range r.Header[name] {
			b = str(b, v)
		}
		mac.Write(b)
	}
	rh := tape.RequestHash(tape.Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header, Body: body}, AnswerHeaders)
	in := append([]byte(replayKeyPrefix), rh[:]...)
	in = str(in, tenant)
	in = str(in, scope)
	return sha256.Sum256(mac.Sum(in))
}

// TestReplayKeyDefinition checks the replay key against its definition, for requests with
// and without each credential header and from goroutines at once (the keyed MAC is shared and
// cloned for each key).
func TestReplayKeyDefinition(t *testing.T) {
	g := newKeyGateway(t)
	body := []byte(`{"model":"claude-sonnet-5-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`)
	var reqs []*http.Request
	for _, h := range []http.Header{
		{},
		{"X-Api-Key": {"sk-ant-one"}},
		{"X-Api-Key": {"sk-ant-two"}, "Anthropic-Version": {"2023-06-01"}},
		{"Authorization": {"Bearer a", "Bearer b"}, "Anthropic-Beta": {"x"}},
	} {
		r, _ := http.NewRequest(http.MethodPost, "http://gw/v1/messages?beta=true", nil)
		r.Header = h
		reqs = append(reqs, r)
	}
	seen := map[[32]byte]bool{}
	for _, r := range reqs {
		for _, scope := range []string{"", "ci"} {
			want := replayKeyByDefinition(g.credKey, r, body, "acme", scope)
			if got := g.tenantReplayKey(r, body, "acme", scope); got != want {
				t.Errorf("headers %v scope %q: key %x, want %x", r.Header, scope, got, want)
			}
			seen[want] = true
		}
	}
	if len(seen) != 2*len(reqs) {
		t.Errorf("%d distinct keys of %d requests", len(seen), 2*len(reqs))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, r := range reqs {
				if g.tenantReplayKey(r, body, "acme", "") != replayKeyByDefinition(g.credKey, r, body, "acme", "") {
					t.Error("a key computed concurrently differs from its definition")
				}
			}
		})
	}
	wg.Wait()
}

// TestReplayKeyAllocations bounds what the replay key, computed before every Messages call
// goes upstream, allocates: the request's canonical hash (package tape) and, of the gateway's
// own part, the MAC's clone and one buffer. It allocated 30 times when every key made a new
// HMAC (hashing the key's pads again) and grew its buffers.
func TestReplayKeyAllocations(t *testing.T) {
	g := newKeyGateway(t)
	body := []byte(`{"model":"claude-sonnet-5-5","max_tokens":64,"stream":true,"metadata":{"user_id":"u-1"},"messages":[{"role":"user","content":"Reply with OK."}]}`)
	r, _ := http.NewRequest(http.MethodPost, "http://gw/v1/messages", nil)
	r.Header.Set("X-Api-Key", "sk-ant-bench")
	r.Header.Set("Anthropic-Version", "2023-06-01")
	r.Header.Set("Content-Type", "application/json")
	canonical := testing.AllocsPerRun(100, func() {
		tape.RequestHash(tape.Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header, Body: body}, AnswerHeaders)
	})
	all := testing.AllocsPerRun(100, func() { g.tenantReplayKey(r, body, "default", "") })
	if own := all - canonical; own > 5 {
		t.Errorf("the replay key allocates %v times, %v of them beyond the request's canonical hash: want at most 5", all, own)
	}
}

// newKeyGateway is a gateway that is not served: for its replay key alone.
func newKeyGateway(t *testing.T) *Gateway {
	t.Helper()
	cfg, _ := testConfig(t, "http://127.0.0.1:1")
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}
