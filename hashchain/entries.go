package hashchain

import (
	"fmt"
	"io"
)

// Since returns the entries from seq to the end of the chain, in order. It reads backwards from
// the tail, so it costs what it returns, not the chain's length (up to 16 MiB of lines; further
// back it scans from the start).
func (c *Chain) Since(seq int64) ([]Entry, error) {
	var size, n int64
	err := c.withLock(func() error {
		if err := c.sync(false); err != nil {
			return err
		}
		size, n = c.size, c.n
		return nil
	})
	if err != nil {
		return nil, err
	}
	if seq < 0 || seq > n {
		return nil, fmt.Errorf("no entry %d: the chain has %d entries", seq, n)
	}
	k := n - seq
	if k == 0 {
		return nil, nil
	}
	var lines [][]byte
	if k <= 1<<20 {
		if lines, _, err = tailLines(c.f, size, int(k)); err != nil {
			return nil, err
		}
	}
	if int64(len(lines)) != k {
		lines = lines[:0]
		err := scanLines(io.NewSectionReader(c.f, 0, size), func(line []byte, i int64) (bool, error) {
			if i >= seq {
				lines = append(lines, append(append([]byte(nil), line...), '\n'))
			}
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]Entry, 0, len(lines))
	for i, l := range lines {
		e, err := c.checkedEntry(l[:len(l)-1], seq+int64(i))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Each calls fn with every entry, in order, checking each line as it goes (O(n)); an error from
// fn stops it and is returned.
func (c *Chain) Each(fn func(Entry) error) error {
	var size int64
	err := c.withLock(func() error {
		if err := c.sync(false); err != nil {
			return err
		}
		size = c.size
		return nil
	})
	if err != nil {
		return err
	}
	return scanLines(io.NewSectionReader(c.f, 0, size), func(line []byte, i int64) (bool, error) {
		e, err := c.checkedEntry(line, i)
		if err != nil {
			return false, err
		}
		return true, fn(e)
	})
}

// checkedEntry decodes line, which must be entry seq and hash to its recorded hash.
func (c *Chain) checkedEntry(line []byte, seq int64) (Entry, error) {
	pl, p, detail := checkLine(line)
	if p != "" {
		return Entry{}, &VerifyError{File: c.path, Line: seq + 1, Seq: seq, Problem: p, Detail: detail}
	}
	var h lineHasher
	if pl.seq != seq || pl.sum(line, &h) != pl.hash {
		return Entry{}, &VerifyError{File: c.path, Line: seq + 1, Seq: seq, Problem: ProblemHashMismatch, Detail: "the entry does not check (run verify)"}
	}
	return decodeEntry(line)
}

// Len returns the number of entries, including those other processes appended.
func (c *Chain) Len() (int64, error) {
	var n int64
	err := c.withLock(func() error {
		err := c.sync(false)
		n = c.n
		return err
	})
	return n, err
}
