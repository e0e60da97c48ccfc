package hashchain

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/agent-rewind/rewind/internal/regular"
)

// VerifyOptions says what a verification checks besides the chain's own lines.
type VerifyOptions struct {
	// Name names the chain in errors (a file path); "" says "chain".
	Name string
	// Sidecar, if not nil, is read as the chain's stored tree hashes (chain.tree) and compared
	// with the hashes recomputed from the chain. A sidecar that ends early is not an error (it
	// lags after a crash), nor, with a Head, one that differs only in the hashes of leaves
	// beyond Head.Size: against the anchored head, that is what a power cut may leave of what
	// was not yet durable (FORMAT.md §6.3), recomputed on the next open. One that differs
	// otherwise, or holds more, is an error.
	Sidecar io.Reader
	// Head, if not nil, is a head the chain must extend: the chain has at least Head.Size
	// entries and the first Head.Size of them hash to Head.Root.
	Head *Head
	// ExactHead also requires that the chain has no entries beyond Head (what an auditor
	// handed a chain and its head checks).
	ExactHead bool
}

// Report describes a chain that verified.
type Report struct {
	Size  int64 `json:"size"`  // entries
	Bytes int64 `json:"bytes"` // file length
	Head  Head  `json:"head"`  // the head of the whole chain, recomputed
	// SidecarLeaves is how many entries the sidecar covered, every hash equal (when checked).
	SidecarLeaves int64 `json:"sidecarLeaves"`
	SidecarLags   bool  `json:"sidecarLags"` // the sidecar covers fewer entries than the chain
	// BeyondHead is how many entries follow the given head (0 without one).
	BeyondHead int64 `json:"beyondHead"`
}

// VerifyFile verifies the chain file at path (FORMAT.md §5.1). When opts.Sidecar is nil and the
// sidecar beside path exists, it is compared too. The error is a *VerifyError for a chain that
// does not verify, another error when the files cannot be read.
func VerifyFile(path string, opts VerifyOptions) (Report, error) {
	f, err := regular.OpenInput(path)
	if err != nil {
		return Report{}, fmt.Errorf("open chain: %w", err)
	}
	defer f.Close()
	if opts.Name == "" {
		opts.Name = path
	}
	if opts.Sidecar == nil {
		s, err := regular.OpenInput(sidecarPath(path))
		if err == nil {
			defer s.Close()
			opts.Sidecar = bufio.NewReaderSize(s, 1<<20)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return Report{}, fmt.Errorf("open sidecar: %w", err)
		}
	}
	return Verify(f, opts)
}

// Verify reads a chain from r and checks every line (FORMAT.md §5.1), then the head and the
// sidecar the options give. Memory stays bounded (O(MaxLineBytes + log n)) however long the
// chain is. The first problem found is returned as a *VerifyError that names its line, seq and
// what is wrong.
func Verify(r io.Reader, opts VerifyOptions) (Report, error) {
	v := &verifier{opts: opts}
	return v.run(r, nil)
}

type verifier struct {
	opts VerifyOptions
	rep  Report
}

func (v *verifier) fail(line, off int64, p Problem, format string, args ...any) error {
	seq := line - 1
	if line == 0 {
		seq = -1
	}
	return &VerifyError{File: v.opts.Name, Line: line, Seq: seq, Offset: off, Problem: p, Detail: fmt.Sprintf(format, args...)}
}

// run verifies r, calling sink (when not nil) with each entry hash in order; a sink error
// stops the run.
func (v *verifier) run(r io.Reader, sink func([32]byte) error) (Report, error) {
	var cmp *sidecarCompare
	if v.opts.Sidecar != nil {
		cmp = &sidecarCompare{r: v.opts.Sidecar, mismatch: -1}
	}
	head := v.opts.Head
	if head != nil && head.Size == 0 && head.Root != emptyRoot {
		return v.rep, v.fail(0, 0, ProblemRewritten, "the head is of size 0 but its root %s is not the empty tree's", hex.EncodeToString(head.Root[:]))
	}

	stop := make(chan struct{})
	chunks := checkChunks(r, stop)
	defer func() {
		close(stop)
		for c := range chunks { // let the reader and workers finish
			<-c.done
		}
	}()
	var (
		line, off int64
		prev      [32]byte // all zeros: entry 0's prev
		first     [32]byte
		fr        frontier
	)
	for c := range chunks {
		<-c.done
		switch {
		case c.err != nil:
			return v.rep, fmt.Errorf("read %s: %w", v.name(), c.err)
		case c.tooLong:
			return v.rep, v.fail(line+1, off, ProblemUnparsable, "line is longer than the limit of %d bytes", MaxLineBytes)
		case c.tail:
			return v.rep, v.fail(line+1, off, ProblemTorn, "the last %d bytes have no final newline: a write cut short (recover moves them aside)", len(c.data))
		}
		for i := range c.lines {
			cl := &c.lines[i]
			line++
			pl := &cl.pl
			if cl.problem != "" {
				return v.rep, v.fail(line, off, cl.problem, "%s", cl.detail)
			}
			if pl.seq != line-1 {
				return v.rep, v.fail(line, off, ProblemSeqGap, "seq is %d, want %d (a line was deleted, duplicated or moved)", pl.seq, line-1)
			}
			if pl.prev != prev {
				return v.rep, v.fail(line, off, ProblemPrevMismatch, "prev is %s, but the entry before has hash %s", hex.EncodeToString(pl.prev[:]), hex.EncodeToString(prev[:]))
			}
			sum := cl.sum
			if sum != pl.hash {
				return v.rep, v.fail(line, off, ProblemHashMismatch, "hash is %s, but the entry hashes to %s (the entry was altered)", hex.EncodeToString(pl.hash[:]), hex.EncodeToString(sum[:]))
			}
			if line == 1 {
				first = sum
			}
			prev = sum
			stored := fr.add(leafHash(sum))
			if cmp != nil {
				cmp.compare(stored)
			}
			if sink != nil {
				if err := sink(sum); err != nil {
					return v.rep, err
				}
			}
			if head != nil && fr.n == head.Size {
				if root := fr.root(); root != head.Root {
					return v.rep, v.fail(0, 0, ProblemRewritten, "the first %d entries hash to root %s, but the head records %s", head.Size, b64(root), b64(head.Root))
				}
				if want := originOf(first); head.Origin != want {
					return v.rep, v.fail(0, 0, ProblemRewritten, "the head's origin is %q, but this chain's is %q", head.Origin, want)
				}
			}
			off += int64(cl.size)
		}
		c.release()
	}
	v.rep.Size, v.rep.Bytes = line, off
	v.rep.Head = Head{Origin: EmptyOrigin, Size: line, Root: fr.root()}
	if line > 0 {
		v.rep.Head.Origin = originOf(first)
	}
	if head != nil {
		if head.Size > line {
			return v.rep, v.fail(0, 0, ProblemCut, "the chain has %d entries, but the head records %d: entries were cut from its end", line, head.Size)
		}
		v.rep.BeyondHead = line - head.Size
		if v.opts.ExactHead && line > head.Size {
			return v.rep, v.fail(head.Size+1, -1, ProblemBeyondHead, "the chain has %d entries, but the head covers only %d: the entries after it are not attested by the head", line, head.Size)
		}
	}
	if cmp != nil {
		v.rep.SidecarLeaves = cmp.leaves
		v.rep.SidecarLags = cmp.leaves < line
		switch {
		case cmp.mismatch >= 0 && head != nil && cmp.mismatch >= tlog.StoredHashCount(head.Size):
			v.rep.SidecarLags = true // beyond the head: not durable before it (FORMAT.md §6.3)
		case cmp.mismatch >= 0:
			level, n := tlog.SplitStoredHashIndex(cmp.mismatch)
			return v.rep, v.fail(0, 0, ProblemSidecar, "stored hash %d (tree level %d, node %d) differs from the one recomputed from the chain; the chain itself verifies: remove the sidecar to have it rebuilt", cmp.mismatch, level, n)
		case cmp.extra():
			return v.rep, v.fail(0, 0, ProblemSidecar, "the sidecar holds hashes beyond the chain's %d entries: the chain was cut, or the sidecar belongs to another chain; if the chain is right, remove the sidecar to have it rebuilt", line)
		}
	}
	return v.rep, nil
}

func (v *verifier) name() string {
	if v.opts.Name == "" {
		return "chain"
	}
	return v.opts.Name
}

func b64(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

// newLineReader buffers r so that ReadSlice returns any line up to MaxLineBytes whole.
func newLineReader(r io.Reader) *bufio.Reader {
	return bufio.NewReaderSize(r, MaxLineBytes+64<<10)
}
