package hashchain

import (
	"io"
)

// After returns the entries whose lines begin at or after byte offset (the chain file's size
// when a caller looked at it, for instance with os.Stat, without opening the chain): the
// entries appended since. It reads only those lines.
func (c *Chain) After(offset int64) ([]Entry, error) {
	var size int64
	err := c.withLock(func() error {
		err := c.sync(false)
		size = c.size
		return err
	})
	if err != nil || offset >= size {
		return nil, err
	}
	start := max(offset-1, 0) // from the LF before offset, to find the first line that begins there
	r := io.NewSectionReader(c.f, start, size-start)
	var out []Entry
	first := true
	err = scanLines(r, func(line []byte, _ int64) (bool, error) {
		if first && offset > 0 {
			first = false
			return true, nil // the end of the line before offset (just its LF when offset is a line start)
		}
		first = false
		pl, p, _ := checkLine(line)
		if p != "" {
			return false, &VerifyError{File: c.path, Line: -1, Seq: -1, Problem: p, Detail: "an entry after the offset does not parse (run verify)"}
		}
		e, err := c.checkedEntry(line, pl.seq)
		if err != nil {
			return false, err
		}
		out = append(out, e)
		return true, nil
	})
	return out, err
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
