package hashchain

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestHeadCheckpointRoundTrip(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	fill(t, c, 4)
	h, _ := c.Head()
	got, signed, err := ParseHead([]byte(h.Checkpoint()))
	if err != nil || signed || got != h {
		t.Fatalf("ParseHead(Checkpoint) = %v, %v, %v", got, signed, err)
	}
	var j Head
	if err := json.Unmarshal(mustJSON(h), &j); err != nil || j != h {
		t.Fatalf("JSON round trip: %v %v", j, err)
	}
	// Extension lines after the root are allowed.
	if got, _, err := ParseHead([]byte(h.Checkpoint() + "ext line\n")); err != nil || got != h {
		t.Fatalf("with an extension line: %v", err)
	}
	for _, bad := range []string{"", "origin\n", "o\n1\nroot\n", "o\n01\n" + b64(h.Root) + "\n", "o\n-1\n" + b64(h.Root) + "\n", "\n1\n" + b64(h.Root) + "\n", "o\n1\n" + b64(h.Root)} {
		if _, _, err := ParseHead([]byte(bad)); !errors.Is(err, ErrBadHead) {
			t.Errorf("ParseHead(%q): %v", bad, err)
		}
	}
}

func TestSignedHead(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	fill(t, c, 3)
	h, _ := c.Head()
	skey, vkey, err := GenerateKey("alice.example/rewind")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(skey, "PRIVATE+KEY+alice.example/rewind+") || !strings.HasPrefix(vkey, "alice.example/rewind+") {
		t.Fatalf("keys %q %q", skey, vkey)
	}
	msg, err := SignHead(h, skey+"\n") // key files end in a newline
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(msg), h.Checkpoint()+"\n\u2014 alice.example/rewind ") {
		t.Fatalf("signed note %q", msg)
	}
	got, err := OpenSignedHead(msg, vkey)
	if err != nil || got != h {
		t.Fatalf("OpenSignedHead: %v %v", got, err)
	}
	if got := NoteSigners(msg); !slices.Equal(got, []string{"alice.example/rewind"}) {
		t.Fatalf("NoteSigners(signed) = %q", got)
	}
	if got := NoteSigners([]byte(h.Checkpoint())); got != nil {
		t.Fatalf("NoteSigners(bare checkpoint) = %q", got)
	}
	if got, signed, err := ParseHead(msg); err != nil || !signed || got != h {
		t.Fatalf("ParseHead(signed): %v %v %v", got, signed, err)
	}
	_, other, _ := GenerateKey("alice.example/rewind")
	if _, err := OpenSignedHead(msg, other); !errors.Is(err, ErrBadHead) {
		t.Fatalf("another key verified the head: %v", err)
	}
	forged := strings.Replace(string(msg), "\n3\n", "\n2\n", 1)
	if _, err := OpenSignedHead([]byte(forged), vkey); !errors.Is(err, ErrBadHead) {
		t.Fatalf("an altered head verified: %v", err)
	}
	if _, err := SignHead(h, vkey); err == nil || !strings.Contains(err.Error(), "PRIVATE+KEY") {
		t.Fatalf("signing with a verifier key: %v", err)
	}
	if _, _, err := GenerateKey("has space"); err == nil {
		t.Fatal("a key name with a space was accepted")
	}
}
