package hashchain

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"sort"

	"golang.org/x/mod/sumdb/tlog"
)

// The Merkle tree over the entries (FORMAT.md §6): leaf i is entry i's 32-byte hash, hashed as
// RFC 6962 leaves and nodes by golang.org/x/mod/sumdb/tlog.

// emptyRoot is RFC 6962's root of the empty tree, SHA-256 of the empty string. (Older versions
// of tlog.TreeHash returned the zero hash for n = 0; this package never asks it.)
var emptyRoot = tlog.Hash(sha256.Sum256(nil))

// leafHash is the RFC 6962 leaf hash of an entry hash: SHA-256(0x00 || entry hash).
func leafHash(entryHash [32]byte) tlog.Hash {
	return tlog.RecordHash(entryHash[:])
}

// frontier computes the tree incrementally from a stream of leaves, in O(log n) memory: it
// keeps the roots of the complete subtrees along the tree's right edge, largest first.
type frontier struct {
	n     int64
	stack []tlog.Hash
	out   []tlog.Hash // the stored hashes the last add created, reused
}

// add appends a leaf and returns the stored hashes it creates, in stored-hash-index order
// (the leaf hash, then each subtree it completes), exactly as tlog.StoredHashes would.
func (f *frontier) add(leaf tlog.Hash) []tlog.Hash {
	f.out = append(f.out[:0], leaf)
	h := leaf
	for t := f.n; t&1 == 1; t >>= 1 {
		h = tlog.NodeHash(f.stack[len(f.stack)-1], h)
		f.stack = f.stack[:len(f.stack)-1]
		f.out = append(f.out, h)
	}
	f.stack = append(f.stack, h)
	f.n++
	return f.out
}

// root returns the Merkle tree hash of the leaves added so far.
func (f *frontier) root() tlog.Hash {
	if f.n == 0 {
		return emptyRoot
	}
	r := f.stack[len(f.stack)-1]
	for i := len(f.stack) - 2; i >= 0; i-- {
		r = tlog.NodeHash(f.stack[i], r)
	}
	return r
}

// sidecar is the file of stored hashes (FORMAT.md §6.2), read and written at offsets.
type sidecar struct {
	f      *os.File
	leaves int64 // leaves it covers: it holds tlog.StoredHashCount(leaves) hashes
}

// ReadHashes implements tlog.HashReader.
func (s *sidecar) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	have := tlog.StoredHashCount(s.leaves)
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= have {
			return nil, fmt.Errorf("hash index %d is beyond the sidecar's %d hashes", x, have)
		}
		if _, err := s.f.ReadAt(out[i][:], x*tlog.HashSize); err != nil {
			return nil, fmt.Errorf("read sidecar %s: %w", s.f.Name(), err)
		}
	}
	return out, nil
}

// leavesIn returns the largest n whose stored hashes fit in count hashes.
func leavesIn(count int64) int64 {
	// StoredHashCount(n) >= n, so n <= count.
	return int64(sort.Search(int(count)+1, func(n int) bool { return tlog.StoredHashCount(int64(n)) > count })) - 1
}

// load sets s.leaves from the file's size, cutting off a partial record that a crash left
// (the sidecar is derived data, rebuilt from the chain).
func (s *sidecar) load() error {
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("stat sidecar: %w", err)
	}
	s.leaves = leavesIn(st.Size() / tlog.HashSize)
	if want := tlog.StoredHashCount(s.leaves) * tlog.HashSize; st.Size() != want {
		if err := s.f.Truncate(want); err != nil {
			return fmt.Errorf("cut partial record from sidecar %s: %w", s.f.Name(), err)
		}
	}
	return nil
}

// frontierAt rebuilds a frontier for the sidecar's first n leaves from O(log n) stored hashes.
func (s *sidecar) frontierAt(n int64) (*frontier, error) {
	f := &frontier{n: n}
	var idx []int64
	start := int64(0)
	for level := 62; level >= 0; level-- {
		size := int64(1) << level
		if n&size != 0 {
			idx = append(idx, tlog.StoredHashIndex(level, start>>level))
			start += size
		}
	}
	hashes, err := s.ReadHashes(idx)
	if err != nil {
		return nil, err
	}
	f.stack = hashes
	return f, nil
}

// leafHashAt returns the sidecar's leaf hash for leaf n.
func (s *sidecar) leafHashAt(n int64) (tlog.Hash, error) {
	h, err := s.ReadHashes([]int64{tlog.StoredHashIndex(0, n)})
	if err != nil {
		return tlog.Hash{}, err
	}
	return h[0], nil
}

// sidecarWriter appends leaves to a sidecar through a frontier and a buffer.
type sidecarWriter struct {
	s   *sidecar
	fr  *frontier
	buf []byte
	off int64
}

func (s *sidecar) writer() (*sidecarWriter, error) {
	fr, err := s.frontierAt(s.leaves)
	if err != nil {
		return nil, err
	}
	return &sidecarWriter{s: s, fr: fr, off: tlog.StoredHashCount(s.leaves) * tlog.HashSize}, nil
}

func (w *sidecarWriter) add(entryHash [32]byte) error {
	for _, h := range w.fr.add(leafHash(entryHash)) {
		w.buf = append(w.buf, h[:]...)
	}
	if len(w.buf) >= 1<<20 {
		return w.flush()
	}
	return nil
}

func (w *sidecarWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.s.f.WriteAt(w.buf, w.off); err != nil {
		return fmt.Errorf("write sidecar %s: %w", w.s.f.Name(), err)
	}
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
	w.s.leaves = w.fr.n
	return nil
}

// finish flushes and fsyncs.
func (w *sidecarWriter) finish() error {
	if err := w.flush(); err != nil {
		return err
	}
	w.s.leaves = w.fr.n
	if err := w.s.f.Sync(); err != nil {
		return fmt.Errorf("sync sidecar %s: %w", w.s.f.Name(), err)
	}
	return nil
}

// reset empties the sidecar, to rebuild it from the chain.
func (s *sidecar) reset() error {
	if err := s.f.Truncate(0); err != nil {
		return fmt.Errorf("reset sidecar %s: %w", s.f.Name(), err)
	}
	s.leaves = 0
	return nil
}

// sidecarCompare checks a stream of stored hashes against a sidecar's bytes, in order.
type sidecarCompare struct {
	r        io.Reader
	buf      [tlog.HashSize]byte
	index    int64 // stored hashes compared so far
	ended    bool  // the sidecar ran out (it lags the chain: not an error)
	leaves   int64 // leaves whose every stored hash matched
	mismatch int64 // index of the first differing hash, or -1
}

// compare checks the hashes that one leaf created; false after the first mismatch.
func (c *sidecarCompare) compare(hashes []tlog.Hash) bool {
	if c.ended || c.mismatch >= 0 {
		return c.mismatch < 0
	}
	for _, h := range hashes {
		if _, err := io.ReadFull(c.r, c.buf[:]); err != nil {
			c.ended = true
			return true
		}
		if tlog.Hash(c.buf) != h {
			c.mismatch = c.index
			return false
		}
		c.index++
	}
	c.leaves++
	return true
}

// extra reports whether the sidecar holds more than the hashes compared (a longer tree).
func (c *sidecarCompare) extra() bool {
	if c.ended || c.mismatch >= 0 {
		return false
	}
	_, err := io.ReadFull(c.r, c.buf[:])
	return err == nil
}
