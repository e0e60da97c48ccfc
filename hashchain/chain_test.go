package hashchain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// testChain is a chain in a temporary directory with its anchor in another.
type testChain struct {
	dir, path, anchor string
}

func newTestChain(t testing.TB) *testChain {
	t.Helper()
	dir := t.TempDir()
	return &testChain{dir: dir, path: filepath.Join(dir, "chain.jsonl"), anchor: filepath.Join(t.TempDir(), "state", "head")}
}

func (tc *testChain) open(t testing.TB) *Chain {
	t.Helper()
	c, err := Open(tc.path, Options{Create: true, Anchor: tc.anchor})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fill appends n entries of varied kinds and data.
func fill(t testing.TB, c *Chain, n int) []Entry {
	t.Helper()
	var out []Entry
	kinds := []string{"checkpoint", "effect", "refusal", "rewind"}
	for i := range n {
		e, err := c.Append(kinds[i%len(kinds)], map[string]any{
			"i": i, "name": fmt.Sprintf("step %d \u00e9\U0001F602\t\"", i), "ok": i%2 == 0, "ratio": float64(i) / 3,
			"nested": map[string]any{"list": []any{i, nil, "x"}},
		})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		out = append(out, e)
	}
	return out
}

func TestAppendVerifyReopen(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	entries := fill(t, c, 20)
	for i, e := range entries {
		if e.Seq != int64(i) || len(e.Hash) != 64 || (i == 0 && e.Prev != ZeroHash) || (i > 0 && e.Prev != entries[i-1].Hash) {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	head, err := c.Head()
	if err != nil || head.Size != 20 || head.Origin != "agent-rewind/"+entries[0].Hash[:32] {
		t.Fatalf("head %v, %v", head, err)
	}
	rep, err := VerifyFile(tc.path, VerifyOptions{Head: &head, ExactHead: true})
	if err != nil || rep.Size != 20 || rep.Head != head || rep.SidecarLeaves != 20 || rep.SidecarLags {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
	// The anchor holds the head, in checkpoint form.
	b, err := os.ReadFile(tc.anchor)
	if err != nil || string(b) != head.Checkpoint() {
		t.Fatalf("anchor %q, %v; want %q", b, err, head.Checkpoint())
	}
	// Entries read back as they were returned.
	got, err := c.Entry(7)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := json.Marshal(got); !bytes.Equal(g, mustJSON(entries[7])) {
		t.Fatalf("Entry(7) = %s, want %s", g, mustJSON(entries[7]))
	}
	if _, err := c.Entry(20); err == nil {
		t.Fatal("Entry(20) of 20 entries succeeded")
	}
	c.Close()
	if _, err := c.Append("x", map[string]any{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	c2 := tc.open(t)
	fill(t, c2, 3)
	h2, _ := c2.Head()
	if h2.Size != 23 {
		t.Fatalf("reopened head %v", h2)
	}
	if _, err := VerifyFile(tc.path, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "chain.jsonl"), Options{})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "no chain at") {
		t.Fatalf("open missing: %v", err)
	}
}

func TestEmptyChainHead(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	h, err := c.Head()
	// RFC 6962: the empty tree's hash is SHA-256 of the empty string.
	want := tlog.Hash{0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55}
	if err != nil || h.Size != 0 || h.Root != want || h.Origin != EmptyOrigin {
		t.Fatalf("empty head %v, %v", h, err)
	}
	rep, err := VerifyFile(tc.path, VerifyOptions{Head: &h, ExactHead: true})
	if err != nil || rep.Head != h {
		t.Fatalf("verify empty: %+v %v", rep, err)
	}
}

func TestAppendRejectsBadData(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	for _, tt := range []struct {
		kind string
		data any
		want string
	}{
		{"k", []int{1}, "JSON object"},
		{"k", "text", "JSON object"},
		{"k", nil, "JSON object"},
		{"k", 42, "JSON object"},
		{"k", map[string]any{"n": jsonNumber("12345678901234567890")}, "encode it as a string"},
		{"k", map[string]any{"f": func() {}}, "does not marshal"},
		{"", map[string]any{}, "kind is empty"},
		{"\xff", map[string]any{}, "UTF-8"},
		{"k", map[string]any{"big": strings.Repeat("x", MaxLineBytes)}, "over the limit"},
		{"k", deepMap(MaxDepth), "deeper"},
	} {
		_, err := c.Append(tt.kind, tt.data)
		if !errors.Is(err, ErrBadData) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Append(%q, %T): %v, want ErrBadData mentioning %q", tt.kind, tt.data, err, tt.want)
		}
	}
	if h, _ := c.Head(); h.Size != 0 {
		t.Fatalf("rejected appends wrote %d entries", h.Size)
	}
	// Just within the depth limit is fine.
	if _, err := c.Append("k", deepMap(MaxDepth-2)); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyFile(tc.path, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
}

// deepMap returns data nested n objects deep (data itself is depth 2 of a line).
func deepMap(n int) map[string]any {
	m := map[string]any{}
	for range n {
		m = map[string]any{"d": m}
	}
	return m
}

func TestAnchorDetectsCutAndRewrite(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	fill(t, c, 10)
	c.Close()
	orig, _ := os.ReadFile(tc.path)
	lines := bytes.SplitAfter(orig, []byte("\n"))

	// Cut the last three entries (and the sidecar with them, as a careful forger would).
	os.WriteFile(tc.path, bytes.Join(lines[:7], nil), 0o600)
	os.Remove(sidecarPath(tc.path))
	_, err := Open(tc.path, Options{Anchor: tc.anchor})
	var ae *AnchorError
	if !errors.As(err, &ae) || !errors.Is(err, ErrCut) || ae.Size != 7 || ae.AnchoredSize != 10 {
		t.Fatalf("cut chain: %v", err)
	}
	if !strings.Contains(err.Error(), "has 7 entries") || !strings.Contains(err.Error(), "recorded 10") {
		t.Fatalf("message lacks the sizes: %v", err)
	}

	// Rewrite entry 3 and every later hash: the chain verifies alone, but not against the anchor.
	rewritten := rewriteFrom(t, orig, 3, func(e *Entry) { e.Data = json.RawMessage(`{"forged":true}`) })
	os.WriteFile(tc.path, rewritten, 0o600)
	if _, err := VerifyFile(tc.path, VerifyOptions{Sidecar: bytes.NewReader(nil)}); err != nil {
		t.Fatalf("a consistent rewrite verifies without a head: %v", err)
	}
	_, err = Open(tc.path, Options{Anchor: tc.anchor})
	if !errors.As(err, &ae) || !errors.Is(err, ErrRewritten) || ae.Size != 10 || ae.AnchoredSize != 10 {
		t.Fatalf("rewritten chain: %v", err)
	}

	// The original opens again; extending it is fine.
	os.WriteFile(tc.path, orig, 0o600)
	c = tc.open(t)
	fill(t, c, 1)
}

// rewriteFrom re-encodes a chain from entry seq on, applying change to that entry and fixing
// every later prev and hash: a rewrite that only a head or anchor can notice.
func rewriteFrom(t testing.TB, chain []byte, seq int, change func(*Entry)) []byte {
	t.Helper()
	lines := bytes.SplitAfter(chain, []byte("\n"))
	var out []byte
	var prev [32]byte
	for i, l := range lines {
		if len(l) == 0 {
			continue
		}
		e, err := decodeEntry(l[:len(l)-1])
		if err != nil {
			t.Fatal(err)
		}
		if i < seq {
			out = append(out, l...)
			decodeHex32(&prev, e.Hash)
			continue
		}
		if i == seq {
			change(&e)
		}
		line, h := encodeEntry(e.Seq, e.Time, e.Kind, e.Data, prev)
		out = append(append(out, line...), '\n')
		prev = h
	}
	return out
}

func TestTornTailAndRecover(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	fill(t, c, 5)
	c.Close()
	good, _ := os.ReadFile(tc.path)

	for _, torn := range []string{`{"data":{"i":5},"ha`, "\x00\x00\x00\x00\n", `{"data":{}}` + "\n"} {
		os.WriteFile(tc.path, append(append([]byte(nil), good...), torn...), 0o600)
		_, err := Open(tc.path, Options{Anchor: tc.anchor})
		var te *TornError
		if !errors.As(err, &te) || te.Offset != int64(len(good)) || te.Bytes != int64(len(torn)) || te.Line != 6 {
			t.Fatalf("torn %q: %v (%+v)", torn, err, te)
		}
		if !strings.Contains(err.Error(), "chain recover") {
			t.Fatalf("torn message does not say what to do: %v", err)
		}
		// Verify locates it too, and Append refuses (the chain is never silently repaired).
		_, verr := VerifyFile(tc.path, VerifyOptions{})
		var ve *VerifyError
		if !errors.As(verr, &ve) || ve.Line != 6 {
			t.Fatalf("verify torn %q: %v", torn, verr)
		}
		if b, _ := os.ReadFile(tc.path); len(b) != len(good)+len(torn) {
			t.Fatal("opening changed a torn chain")
		}
	}

	rec, err := Recover(tc.path, Options{Anchor: tc.anchor})
	if err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(rec.SavedAs)
	if err != nil || string(saved) != `{"data":{}}`+"\n" || filepath.Dir(rec.SavedAs) != tc.dir || !strings.HasPrefix(filepath.Base(rec.SavedAs), "chain.torn-") {
		t.Fatalf("saved torn bytes %q in %s: %v", saved, rec.SavedAs, err)
	}
	if rec.Entry.Seq != 5 || rec.Entry.Kind != RecoverKind || rec.Offset != int64(len(good)) || rec.Bytes != 12 {
		t.Fatalf("recovery %+v", rec)
	}
	var data struct {
		Offset     int64  `json:"offset"`
		TornBytes  int64  `json:"torn_bytes"`
		TornSHA256 string `json:"torn_sha256"`
		SavedAs    string `json:"saved_as"`
	}
	json.Unmarshal(rec.Entry.Data, &data)
	if data.Offset != rec.Offset || data.TornBytes != 12 || data.TornSHA256 != rec.SHA256 || data.SavedAs != filepath.Base(rec.SavedAs) {
		t.Fatalf("recover entry data %s", rec.Entry.Data)
	}
	if _, err := VerifyFile(tc.path, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Recover(tc.path, Options{Anchor: tc.anchor}); !errors.Is(err, ErrNothingToRecover) {
		t.Fatalf("second recover: %v", err)
	}
	c = tc.open(t)
	fill(t, c, 1)
}

func TestSidecarRebuilt(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	fill(t, c, 37)
	want, _ := c.Head()
	c.Close()
	full, _ := os.ReadFile(sidecarPath(tc.path))
	for name, damage := range map[string]func(){
		"deleted":        func() { os.Remove(sidecarPath(tc.path)) },
		"lags 5 leaves":  func() { os.WriteFile(sidecarPath(tc.path), full[:tlog.StoredHashCount(32)*32], 0o600) },
		"partial record": func() { os.WriteFile(sidecarPath(tc.path), full[:len(full)-40], 0o600) },
		"garbage tail leaf": func() {
			b := bytes.Clone(full)
			b[len(b)-1] ^= 1
			os.WriteFile(sidecarPath(tc.path), b, 0o600)
		},
	} {
		damage()
		c, err := Open(tc.path, Options{Anchor: tc.anchor})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := c.Head()
		c.Close()
		if err != nil || got != want {
			t.Fatalf("%s: head %v, %v; want %v", name, got, err, want)
		}
		if b, _ := os.ReadFile(sidecarPath(tc.path)); !bytes.Equal(b, full) {
			t.Fatalf("%s: sidecar not rebuilt to the same bytes", name)
		}
	}
	// Damage inside the tree is not looked for on open (that costs O(n)), but proofs are checked
	// before they are returned, and a failing one has the sidecar rebuilt.
	b := bytes.Clone(full)
	b[100] ^= 1
	os.WriteFile(sidecarPath(tc.path), b, 0o600)
	c = tc.open(t)
	for seq := range int64(37) {
		p, err := c.ProveInclusion(seq, 37)
		e, _ := c.Entry(seq)
		if err != nil || CheckInclusion(p, want, seq, e.Hash) != nil {
			t.Fatalf("proof of %d with a damaged sidecar: %v", seq, err)
		}
	}
	for old := range int64(37) {
		p, err := c.ProveConsistency(old, 37)
		oh, _ := c.HeadAt(old)
		if err != nil || CheckConsistency(p, oh, want) != nil {
			t.Fatalf("consistency proof from %d with a damaged sidecar: %v", old, err)
		}
	}
	c.Close()
	if b, _ := os.ReadFile(sidecarPath(tc.path)); !bytes.Equal(b, full) {
		t.Fatal("a failing proof did not have the sidecar rebuilt")
	}

	// Verify reports a damaged sidecar (the chain itself is fine).
	b = bytes.Clone(full)
	b[64] ^= 1
	os.WriteFile(sidecarPath(tc.path), b, 0o600)
	_, err := VerifyFile(tc.path, VerifyOptions{})
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.Problem != ProblemSidecar {
		t.Fatalf("verify with damaged sidecar: %v", err)
	}
	// A sidecar longer than the chain: the chain was cut.
	os.WriteFile(sidecarPath(tc.path), append(bytes.Clone(full), make([]byte, 64)...), 0o600)
	if _, err := VerifyFile(tc.path, VerifyOptions{}); !errors.As(err, &ve) || ve.Problem != ProblemSidecar {
		t.Fatalf("verify with a longer sidecar: %v", err)
	}
}

func TestOtherProcessAppendsSeen(t *testing.T) {
	// Two Chains on one file behave like two processes: each sees the other's appends.
	tc := newTestChain(t)
	a, b := tc.open(t), tc.open(t)
	for i := range 10 {
		c := a
		if i%3 == 0 {
			c = b
		}
		e, err := c.Append("k", map[string]int{"i": i})
		if err != nil || e.Seq != int64(i) {
			t.Fatalf("append %d: %+v %v", i, e, err)
		}
	}
	ha, _ := a.Head()
	hb, _ := b.Head()
	if ha != hb || ha.Size != 10 {
		t.Fatalf("heads %v / %v", ha, hb)
	}
	if _, err := VerifyFile(tc.path, VerifyOptions{Head: &ha, ExactHead: true}); err != nil {
		t.Fatal(err)
	}
}

func TestClock(t *testing.T) {
	tc := newTestChain(t)
	c, err := Open(tc.path, Options{Create: true, Clock: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", 3600)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e, _ := c.Append("k", struct{}{})
	if e.Time != "2026-01-02T02:04:05.000006Z" || string(e.Data) != "{}" {
		t.Fatalf("entry %+v", e)
	}
}
