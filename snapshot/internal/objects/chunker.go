package objects

import (
	"io"
)

// Content-defined chunking of large files (FORMAT.md, "Chunked contents"): FastCDC (Xia et al.,
// USENIX ATC 2016) with a gear hash and normalised chunking, as restic, borg and kopia cut theirs.
// A boundary depends only on the 64 bytes before it and on the previous boundary, so an edit
// moves the boundaries near it and no others: a 1 MiB change to a large file stores about
// 1 MiB plus a chunk or two, not the file. The boundaries are part of the format (they decide
// which chunks two versions share): the table and the constants below never change.
const (
	// ChunkedFile is the size above which a stored file is cut into chunks; smaller files stay
	// whole objects (a change to one stores at most this much).
	ChunkedFile = 4 << 20
	// minChunk, avgChunk and MaxChunk bound the chunks: no cut before minChunk bytes (those are
	// not even hashed), a cut forced at MaxChunk, about avgChunk on average. MaxChunk bounds what
	// an append costs: the old last chunk (at most MaxChunk) is stored again with the new bytes.
	minChunk = 128 << 10
	avgChunk = 512 << 10
	MaxChunk = 2 << 20
	// maskSmall and maskLarge are the normalised-chunking masks (FastCDC's level 2): before
	// avgChunk a cut needs the top log2(avgChunk)+2 bits of the hash clear (harder), after it
	// the top log2(avgChunk)-2 (easier), which narrows the spread of chunk sizes around avgChunk.
	// Top bits: the gear hash shifts left once a byte, so bit k depends on the last k+1 bytes
	// and only the top bits see a full 64-byte window.
	maskSmall uint64 = (1<<21 - 1) << (64 - 21)
	maskLarge uint64 = (1<<17 - 1) << (64 - 17)
)

// cutPoint returns the length of the chunk that starts b: the first boundary in b, or len(b)
// capped at MaxChunk when b holds none (the caller passes at least MaxChunk bytes unless they
// are the file's last).
func cutPoint(b []byte) int {
	n := len(b)
	if n <= minChunk {
		return n
	}
	if n > MaxChunk {
		n = MaxChunk
	}
	b = b[:n] // lets the compiler drop the bounds checks below
	normal := min(n, avgChunk)
	var fp uint64
	i := minChunk
	for ; i < normal; i++ {
		fp = fp<<1 + gear[b[i]]
		if fp&maskSmall == 0 {
			return i + 1
		}
	}
	for ; i < n; i++ {
		fp = fp<<1 + gear[b[i]]
		if fp&maskLarge == 0 {
			return i + 1
		}
	}
	return n
}

// chunker cuts what it reads into chunks, hashing every byte it reads into whole, so a file is
// read once for both its own hash and its chunks'. It holds at most 2*MaxChunk bytes.
type chunker struct {
	r     io.Reader
	whole io.Writer
	buf   []byte
	start int // the next chunk starts here
	end   int // bytes read end here
	eof   bool
	n     int64 // bytes read
}

func newChunker(r io.Reader, whole io.Writer, buf []byte) *chunker {
	return &chunker{r: r, whole: whole, buf: buf[:2*MaxChunk]}
}

// next returns the next chunk, valid until the following call, or io.EOF after the last.
func (c *chunker) next() ([]byte, error) {
	if c.end-c.start < MaxChunk && !c.eof {
		// Keep the unread rest, then fill: a cut can always see MaxChunk bytes ahead.
		c.end = copy(c.buf, c.buf[c.start:c.end])
		c.start = 0
		for c.end < len(c.buf) && !c.eof {
			k, err := c.r.Read(c.buf[c.end:])
			c.whole.Write(c.buf[c.end : c.end+k])
			c.end += k
			c.n += int64(k)
			if err == io.EOF {
				c.eof = true
			} else if err != nil {
				return nil, err
			}
		}
	}
	if c.start == c.end {
		return nil, io.EOF
	}
	k := cutPoint(c.buf[c.start:c.end])
	b := c.buf[c.start : c.start+k]
	c.start += k
	return b, nil
}
