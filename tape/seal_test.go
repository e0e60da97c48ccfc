package tape

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// Test vectors for the sealed-value format of doc.go, under the test key (testKeyHex), tenant
// "acme". They were checked against an independent implementation of the documented layout
// (Python: cryptography's HKDFExpand and AESGCM, hmac, struct), so they pin the format, not just
// this code's current behaviour.
const (
	vecKeyID     = "eac58647313c024d2a8e3a44128ac0a9"
	vecTag       = "5579e223ace5bebf077e0f35bbb296b9c37db156d0bd8acfd8c8a9019a49b40d" // request tag of hash aa 00..00
	vecCursorMAC = "7298ef832ca7c30121fad91ff03cd5daa5d61979f85c5f7b4e6af3402cab6af9" // epoch e1, cursor review-1, position 3
	// A response sealed for epoch e1, position 7, with vecTag: status 200, Content-Type
	// text/event-stream, body "data: hi\n\n".
	vecResponse = "78c35382589164d3c0943ed268b27b04708d00ea1fd5981a23ea7e8995d9ee172edeedd0c4f7f4877f148bb39e389d519fd65eef952936af90386a5bfa2f3807e39324fd0861c4736403f68566c9fd32065a3eaf05"
)

func TestSealVectors(t *testing.T) {
	k, err := deriveKeys(testKey)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSealer(k, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(s.keyID); got != vecKeyID {
		t.Errorf("key id %s, want %s", got, vecKeyID)
	}
	tag := s.requestTag(Hash{0xaa})
	if got := hex.EncodeToString(tag); got != vecTag {
		t.Errorf("request tag %s, want %s", got, vecTag)
	}
	if got := hex.EncodeToString(s.cursorMAC("e1", "review-1", 3)); got != vecCursorMAC {
		t.Errorf("cursor mac %s, want %s", got, vecCursorMAC)
	}
	blob, _ := hex.DecodeString(vecResponse)
	plain, ok := s.open(blob, s.ad("e1", 7, kindResponse, tag))
	if !ok {
		t.Fatal("the vector does not open")
	}
	resp, err := decodeResponse(plain)
	if err != nil || resp.Status != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || string(resp.Body) != "data: hi\n\n" {
		t.Fatalf("vector decodes to %+v, %v", resp, err)
	}
	// Every bound field matters.
	for name, ad := range map[string][]byte{
		"position": s.ad("e1", 8, kindResponse, tag),
		"epoch":    s.ad("e2", 7, kindResponse, tag),
		"kind":     s.ad("e1", 7, kindRequest, tag),
		"tag":      s.ad("e1", 7, kindResponse, s.requestTag(Hash{0xab})),
	} {
		if _, ok := s.open(blob, ad); ok {
			t.Errorf("the vector opens with another %s", name)
		}
	}
	other, _ := newSealer(k, "bolt")
	if _, ok := other.open(blob, other.ad("e1", 7, kindResponse, tag)); ok {
		t.Error("the vector opens for another tenant")
	}
	// Fresh seals use fresh nonces.
	a, b := s.seal([]byte("x"), nil), s.seal([]byte("x"), nil)
	if bytes.Equal(a, b) {
		t.Error("two seals of one value are equal")
	}
}
