package hashchain

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
)

// The verifier's pipeline: a reader cuts the chain into chunks of whole lines, workers check and
// hash the lines of different chunks in parallel (the costly, independent part: parsing and
// SHA-256), and the verifier consumes the results in order (the cheap, sequential part: links,
// the Merkle tree). Memory stays bounded: at most inFlight chunks exist at once.

const (
	chunkSize = 4 << 20 // bytes read at a time; more than any valid line
	inFlight  = 6       // chunks read ahead of the verifier
)

// checkedLine is a worker's result for one line.
type checkedLine struct {
	pl      parsedLine
	sum     [32]byte // the entry hash, when problem is ""
	problem Problem
	detail  string
	size    int // bytes, with the LF
}

// chunk is a run of whole lines (each ending in LF), or the file's unterminated tail, or a
// read error.
type chunk struct {
	data    []byte
	lines   []checkedLine
	tail    bool // data is bytes after the last LF: a torn line
	tooLong bool // chunkSize bytes without an LF: a line over the limit
	err     error
	done    chan struct{}
}

var chunkPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// checkChunks streams r's lines, checked and hashed, in order; stop ends it early.
func checkChunks(r io.Reader, stop <-chan struct{}) <-chan *chunk {
	order := make(chan *chunk, inFlight)
	work := make(chan *chunk, inFlight)
	workers := min(runtime.GOMAXPROCS(0), 4)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h lineHasher
			for c := range work {
				c.check(&h)
				close(c.done)
			}
		}()
	}
	send := func(c *chunk) bool {
		c.done = make(chan struct{})
		select {
		case order <- c:
		case <-stop:
			return false
		}
		if c.data == nil || c.tail {
			close(c.done)
			return true
		}
		select {
		case work <- c:
			return true
		case <-stop:
			close(c.done)
			return false
		}
	}
	go func() {
		defer func() {
			close(work)
			wg.Wait()
			close(order)
		}()
		var carry []byte
		for {
			bp := chunkPool.Get().(*[]byte)
			buf := (*bp)[:chunkSize]
			n := copy(buf, carry)
			m, err := io.ReadFull(r, buf[n:])
			buf = buf[:n+m]
			eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
			if err != nil && !eof {
				send(&chunk{err: err})
				return
			}
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 && !eof {
				send(&chunk{tooLong: true})
				return
			}
			carry = append(carry[:0], buf[i+1:]...)
			if i >= 0 && !send(&chunk{data: buf[:i+1]}) {
				return
			}
			if eof {
				if len(carry) > 0 {
					send(&chunk{data: carry, tail: true})
				}
				return
			}
		}
	}()
	return order
}

// check parses and hashes every line of the chunk.
func (c *chunk) check(h *lineHasher) {
	c.lines = make([]checkedLine, 0, len(c.data)/200+1)
	for b := c.data; len(b) > 0; {
		i := bytes.IndexByte(b, '\n')
		body := b[:i]
		cl := checkedLine{size: i + 1}
		cl.pl, cl.problem, cl.detail = checkLine(body)
		if cl.problem == "" {
			cl.sum = cl.pl.sum(body, h)
		}
		c.lines = append(c.lines, cl)
		b = b[i+1:]
	}
}

// release returns the chunk's buffer to the pool.
func (c *chunk) release() {
	if c.data != nil && !c.tail && cap(c.data) == chunkSize {
		b := c.data[:chunkSize]
		chunkPool.Put(&b)
	}
	c.data, c.lines = nil, nil
}
