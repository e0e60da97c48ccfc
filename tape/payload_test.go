package tape

import (
	"bytes"
	"net/http"
	"reflect"
	"testing"
)

func TestPayloadRoundTrip(t *testing.T) {
	h := Hash{1, 2, 3}
	fields := []headerField{{"Anthropic-Beta", "a"}, {"Anthropic-Beta", ""}, {"Anthropic-Version", "v"}}
	r, err := decodeRequest(encodeRequest(h, "POST", "/p?q", fields, []byte("body")))
	if err != nil || r.hash != h || r.method != "POST" || r.path != "/p?q" || !reflect.DeepEqual(r.headers, fields) || string(r.body) != "body" {
		t.Fatalf("request round trip: %+v, %v", r, err)
	}
	resp, err := decodeResponse(encodeResponse(599, fields, nil))
	if err != nil || resp.Status != 599 || len(resp.Body) != 0 || !reflect.DeepEqual(resp.Header, http.Header{"Anthropic-Beta": {"a", ""}, "Anthropic-Version": {"v"}}) {
		t.Fatalf("response round trip: %+v, %v", resp, err)
	}
	// Truncated or extended payloads are rejected.
	full := encodeRequest(h, "POST", "/", fields, []byte("b"))
	for _, bad := range [][]byte{full[:len(full)-1], append(bytes.Clone(full), 0), nil, full[:31]} {
		if _, err := decodeRequest(bad); err == nil {
			t.Errorf("decodeRequest(%d bytes) accepted a damaged payload", len(bad))
		}
	}
}

// FuzzDecodePayload feeds arbitrary bytes to the plaintext decoders. Plaintexts only reach them
// after authentication, but a decoder must still never panic or over-allocate, and whatever it
// accepts must encode back to the same bytes.
func FuzzDecodePayload(f *testing.F) {
	f.Add(encodeRequest(Hash{}, "GET", "/", nil, nil))
	f.Add(encodeResponse(200, []headerField{{"Content-Type", "text/event-stream"}}, []byte("data: x\n\n")))
	f.Add([]byte{0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, p []byte) {
		if r, err := decodeRequest(p); err == nil {
			if again := encodeRequest(r.hash, r.method, r.path, r.headers, r.body); !bytes.Equal(again, p) {
				t.Fatalf("request %x re-encodes as %x", p, again)
			}
		}
		if resp, err := decodeResponse(p); err == nil && resp.Status < 0 {
			t.Fatal("negative status")
		}
	})
}
