package hashchain

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// laterQueue is a caller's group commit in miniature: it keeps the newest flush per key.
type laterQueue struct {
	mu      sync.Mutex
	pending map[string]func() error
	handed  int
}

func (q *laterQueue) later(key string, flush func() error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		q.pending = map[string]func() error{}
	}
	q.pending[key] = flush
	q.handed++
}

func (q *laterQueue) flush(t testing.TB) {
	t.Helper()
	q.mu.Lock()
	p := q.pending
	q.pending = nil
	q.mu.Unlock()
	for _, f := range p {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
}

// openLater opens tc's chain, creating it, with its sidecar and anchor left to q.
func openLater(t testing.TB, tc *testChain, q *laterQueue) *Chain {
	t.Helper()
	c, err := Open(tc.path, Options{Create: true, Anchor: tc.anchor, SyncLater: q.later})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// appendRange appends checkpoint entries from … to-1.
func appendRange(t testing.TB, c *Chain, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := c.Append("checkpoint", benchData(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func anchoredSize(t testing.TB, anchor string) int64 {
	t.Helper()
	h, ok, err := readAnchor(anchor)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return -1
	}
	return h.Size
}

// TestSyncLaterDefersSidecarAndAnchor: with SyncLater, appends leave the anchor where it was
// and hand over one flush per chain; running the newest anchors the newest head, and an older
// flush run after a newer anchor does not move it back.
func TestSyncLaterDefersSidecarAndAnchor(t *testing.T) {
	tc := newTestChain(t)
	var q laterQueue
	c := openLater(t, tc, &q)
	q.flush(t) // the empty chain's anchor, handed over by Open
	if got := anchoredSize(t, tc.anchor); got != 0 {
		t.Fatalf("anchor after open: size %d, want 0", got)
	}
	appendRange(t, c, 0, 2)
	stale := q.pending[tc.path] // the flush of the head of 2
	appendRange(t, c, 2, 5)
	if got := anchoredSize(t, tc.anchor); got != 0 {
		t.Fatalf("anchor after deferred appends: size %d, want 0 until the flush", got)
	}
	if len(q.pending) != 1 || q.handed != 6 {
		t.Fatalf("pending %d flushes (handed %d), want one per chain (6 handed)", len(q.pending), q.handed)
	}
	q.flush(t)
	head, err := c.Head()
	if err != nil {
		t.Fatal(err)
	}
	ah, _, _ := readAnchor(tc.anchor)
	if ah != head || head.Size != 5 {
		t.Fatalf("anchor %v after the flush, want the head %v", ah, head)
	}
	if err := stale(); err != nil {
		t.Fatal(err)
	}
	if ah, _, _ := readAnchor(tc.anchor); ah != head {
		t.Fatalf("an older flush moved the anchor back to %v", ah)
	}
}

// storeImage is the bytes of a chain's files at one moment.
type storeImage struct{ chain, tree, anchor []byte }

func readImage(t testing.TB, tc *testChain) storeImage {
	t.Helper()
	var im storeImage
	var err error
	if im.chain, err = os.ReadFile(tc.path); err != nil {
		t.Fatal(err)
	}
	if im.tree, err = os.ReadFile(sidecarPath(tc.path)); err != nil {
		t.Fatal(err)
	}
	if im.anchor, err = os.ReadFile(tc.anchor); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return im
}

// write puts the image in a fresh store (the stamp is left out: a power cut may lose it too).
func (im storeImage) write(t testing.TB) *testChain {
	t.Helper()
	tc := newTestChain(t)
	if err := os.WriteFile(tc.path, im.chain, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sidecarPath(tc.path), im.tree, 0o600); err != nil {
		t.Fatal(err)
	}
	if im.anchor != nil {
		if err := os.MkdirAll(filepath.Dir(tc.anchor), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tc.anchor, im.anchor, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return tc
}

// powerCuts returns what the sidecar may hold after a power cut, given its bytes when last
// fsynced (durable) and now (written): the durable bytes, then any of the written tail cut
// short, zeroed, or scrambled from offsets on and between hashes (a page written, the next not, or the size
// updated before the data).
func powerCuts(durable, written []byte) map[string][]byte {
	out := map[string][]byte{"all written": written}
	for off := len(durable); off <= len(written); off += 48 { // alternately on and between hashes
		out[fmt.Sprintf("cut at %d", off)] = written[:off:off]
		zeroed := bytes.Clone(written)
		clear(zeroed[off:])
		out[fmt.Sprintf("zeroed from %d", off)] = zeroed
		garbage := bytes.Clone(written)
		for i := off; i < len(garbage); i++ {
			garbage[i] ^= 0x5a
		}
		out[fmt.Sprintf("scrambled from %d", off)] = garbage
	}
	return out
}

// TestPowerCutBeforeTheFlush simulates a power cut at each point between an append's line
// fsync and its deferred flush: the chain's lines (each fsynced) survive, the sidecar keeps
// what its last fsync covered and any mangling of what was written since, and the anchor is
// the one last written (before the flush, or after the flush's sidecar fsync but before its
// anchor). Reopened, the chain verifies, its head and inclusion proofs are right, and the
// anchor that lags is no alarm.
func TestPowerCutBeforeTheFlush(t *testing.T) {
	tc := newTestChain(t)
	var q laterQueue
	c := openLater(t, tc, &q)
	appendRange(t, c, 0, 6) // a flushed prefix, so that the watermark is not 0
	q.flush(t)
	durable := readImage(t, tc)
	cases := 0
	for i := 6; i < 10; i++ { // appends since the flush: 1, 2, 3, 4 leaves beyond the watermark
		appendRange(t, c, i, i+1)
		now := readImage(t, tc)
		head, err := c.Head()
		if err != nil {
			t.Fatal(err)
		}
		// Before the flush: the anchor as last written. In the flush, after the sidecar's
		// fsync and before the anchor: the sidecar whole, the anchor old.
		images := map[string]storeImage{}
		for name, tree := range powerCuts(durable.tree, now.tree) {
			images["before the flush, sidecar "+name] = storeImage{chain: now.chain, tree: tree, anchor: durable.anchor}
		}
		images["after the sidecar's fsync, before the anchor"] = storeImage{chain: now.chain, tree: now.tree, anchor: durable.anchor}
		for name, im := range images {
			cases++
			checkReopen(t, fmt.Sprintf("%d entries, %s", i+1, name), im.write(t), head)
		}
	}
	t.Logf("%d power-cut images reopened", cases)
}

// checkReopen verifies a store image against its anchor, then opens it in both modes and
// checks it against the live chain's head.
func checkReopen(t *testing.T, name string, tc *testChain, want Head) {
	t.Helper()
	// Before any writer repairs it, verify against the anchor (as "chain verify" does) finds
	// the chain whole and at most a sidecar that lags.
	ah, ok, err := readAnchor(tc.anchor)
	if err != nil || !ok {
		t.Fatalf("%s: anchor: %v %v", name, ok, err)
	}
	if _, err := VerifyFile(tc.path, VerifyOptions{Head: &ah}); err != nil {
		t.Fatalf("%s: verify against the anchor before reopening: %v", name, err)
	}
	for _, deferred := range []bool{false, true} {
		var q laterQueue
		opts := Options{Anchor: tc.anchor}
		if deferred {
			opts.SyncLater = q.later
		}
		c, err := Open(tc.path, opts)
		if err != nil {
			t.Fatalf("%s (deferred %v): open: %v", name, deferred, err)
		}
		head, err := c.Head()
		if err != nil || head != want {
			t.Fatalf("%s (deferred %v): head %v, %v; want %v", name, deferred, head, err, want)
		}
		if _, err := VerifyFile(tc.path, VerifyOptions{Head: &want, ExactHead: true}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for seq := range want.Size {
			e, err := c.Entry(seq)
			if err != nil {
				t.Fatal(err)
			}
			p, err := c.ProveInclusion(seq, want.Size)
			if err != nil {
				t.Fatalf("%s: prove %d: %v", name, seq, err)
			}
			if err := CheckInclusion(p, want, seq, e.Hash); err != nil {
				t.Fatalf("%s (deferred %v): inclusion of %d: %v", name, deferred, seq, err)
			}
		}
		q.flush(t)
		c.Close()
		if got := anchoredSize(t, tc.anchor); got != want.Size {
			t.Fatalf("%s (deferred %v): anchored %d after reopening, want %d", name, deferred, got, want.Size)
		}
	}
}

// TestTamperCaughtWithSyncLater: deferring the anchor does not weaken what it witnesses once
// flushed: a chain cut below the anchored size, or edited, is still caught on open.
func TestTamperCaughtWithSyncLater(t *testing.T) {
	tc := newTestChain(t)
	var q laterQueue
	c := openLater(t, tc, &q)
	appendRange(t, c, 0, 8)
	q.flush(t)
	c.Close()
	im := readImage(t, tc)
	lines := bytes.SplitAfter(im.chain, []byte("\n"))

	cut := im
	cut.chain = bytes.Join(lines[:5], nil)
	var ae *AnchorError
	ctc := cut.write(t)
	if _, err := Open(ctc.path, Options{Anchor: ctc.anchor, SyncLater: q.later}); !errors.As(err, &ae) || !ae.Cut {
		t.Fatalf("a chain cut to 5 of 8 anchored entries opened with %v, want a cut *AnchorError", err)
	}

	edited := im
	edited.chain = bytes.Replace(im.chain, []byte("cp-0000003"), []byte("cp-0000009"), 1)
	etc := edited.write(t)
	if _, err := Open(etc.path, Options{Anchor: etc.anchor, SyncLater: q.later}); err == nil {
		t.Fatal("an edited chain opened")
	}
}
