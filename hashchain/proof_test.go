package hashchain

import (
	"crypto/sha256"
	"errors"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// mth is RFC 6962's Merkle tree hash, straight from its recursive definition (FORMAT.md §6).
func mth(leaves [][32]byte) tlog.Hash {
	switch len(leaves) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return sha256.Sum256(append([]byte{0}, leaves[0][:]...))
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	l, r := mth(leaves[:k]), mth(leaves[k:])
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

func TestHeadsAndProofs(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	const n = 21
	entries := fill(t, c, n)
	var leaves [][32]byte
	for _, e := range entries {
		var h [32]byte
		decodeHex32(&h, e.Hash)
		leaves = append(leaves, h)
	}
	heads := make([]Head, n+1)
	for size := int64(0); size <= n; size++ {
		h, err := c.HeadAt(size)
		if err != nil {
			t.Fatal(err)
		}
		if h.Root != mth(leaves[:size]) {
			t.Fatalf("head of size %d: root differs from RFC 6962's MTH", size)
		}
		heads[size] = h
	}
	if _, err := c.HeadAt(n + 1); err == nil {
		t.Fatal("HeadAt beyond the chain succeeded")
	}
	for size := int64(1); size <= n; size++ {
		for seq := int64(0); seq < size; seq++ {
			p, err := c.ProveInclusion(seq, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckInclusion(p, heads[size], seq, entries[seq].Hash); err != nil {
				t.Fatalf("inclusion %d in %d: %v", seq, size, err)
			}
			// The proof fails for another entry, another position, or a tampered proof.
			if err := CheckInclusion(p, heads[size], seq, entries[(seq+1)%size].Hash); size > 1 && !errors.Is(err, ErrProof) {
				t.Fatalf("inclusion proof accepted the wrong entry: %v", err)
			}
			if len(p) > 0 {
				p[0][0] ^= 1
				if err := CheckInclusion(p, heads[size], seq, entries[seq].Hash); !errors.Is(err, ErrProof) {
					t.Fatalf("tampered inclusion proof accepted: %v", err)
				}
			}
		}
		for old := int64(0); old <= size; old++ {
			p, err := c.ProveConsistency(old, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckConsistency(p, heads[old], heads[size]); err != nil {
				t.Fatalf("consistency %d -> %d: %v", old, size, err)
			}
			if old > 0 && old < size {
				other := heads[old]
				other.Root[0] ^= 1
				if err := CheckConsistency(p, other, heads[size]); !errors.Is(err, ErrProof) {
					t.Fatalf("consistency from a wrong old root accepted: %v", err)
				}
			}
		}
	}
	for _, bad := range [][2]int64{{-1, 3}, {3, 3}, {0, n + 1}, {0, 0}} {
		if _, err := c.ProveInclusion(bad[0], bad[1]); err == nil {
			t.Errorf("ProveInclusion(%d, %d) succeeded", bad[0], bad[1])
		}
	}
	for _, bad := range [][2]int64{{2, 1}, {-1, 3}, {0, n + 1}} {
		if _, err := c.ProveConsistency(bad[0], bad[1]); err == nil {
			t.Errorf("ProveConsistency(%d, %d) succeeded", bad[0], bad[1])
		}
	}
}

func TestFrontierMatchesTlog(t *testing.T) {
	// The verifier's streaming tree emits exactly tlog's stored hashes, in order.
	var fr frontier
	var stored []tlog.Hash
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	for n := int64(0); n < 300; n++ {
		var leaf [32]byte
		leaf[0], leaf[1] = byte(n), byte(n>>8)
		want, err := tlog.StoredHashes(n, leaf[:], r)
		if err != nil {
			t.Fatal(err)
		}
		got := fr.add(leafHash(leaf))
		if len(got) != len(want) {
			t.Fatalf("leaf %d: %d hashes, want %d", n, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("leaf %d hash %d differs", n, i)
			}
		}
		stored = append(stored, want...)
		th, _ := tlog.TreeHash(n+1, r)
		if fr.root() != th {
			t.Fatalf("root after %d leaves differs", n+1)
		}
	}
}
