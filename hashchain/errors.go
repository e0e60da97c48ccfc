package hashchain

import (
	"errors"
	"fmt"
)

// Problem names what is wrong with a chain, as FORMAT.md §5.1 lists it.
type Problem string

// The problems a verification reports, in the order FORMAT.md §5.1 checks a line, then the
// problems found beyond the lines themselves.
const (
	ProblemTorn         Problem = "torn"          // the last line has no final LF: a write cut short
	ProblemUnparsable   Problem = "unparsable"    // not an entry of FORMAT.md §2
	ProblemNonCanonical Problem = "non-canonical" // not byte-equal to its RFC 8785 encoding
	ProblemSeqGap       Problem = "seq gap"       // seq is not the line's position
	ProblemPrevMismatch Problem = "prev mismatch" // prev is not the previous entry's hash
	ProblemHashMismatch Problem = "hash mismatch" // hash is not the entry's hash
	ProblemCut          Problem = "cut"           // fewer entries than a head or anchor recorded
	ProblemRewritten    Problem = "rewritten"     // the first n entries no longer hash to the head's root
	ProblemBeyondHead   Problem = "beyond head"   // more entries than an exact head covers
	ProblemSidecar      Problem = "sidecar mismatch"
)

// VerifyError locates the first thing wrong with a chain: the line (1-based) and the seq an
// entry there should have (line-1), the problem, and the detail (what was found, what was
// expected).
type VerifyError struct {
	File    string // the chain file, when known
	Line    int64  // 1-based line number; 0 when the problem is not one line's
	Seq     int64  // the seq expected at Line (Line-1); -1 when not one line's
	Offset  int64  // byte offset of the line's start in the file
	Problem Problem
	Detail  string
}

func (e *VerifyError) Error() string {
	where := e.File
	if where == "" {
		where = "chain"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d (seq %d): %s: %s", where, e.Line, e.Seq, e.Problem, e.Detail)
	}
	return fmt.Sprintf("%s: %s: %s", where, e.Problem, e.Detail)
}

// Is makes errors.Is(err, ErrBroken) true for every verification failure.
func (e *VerifyError) Is(target error) bool { return target == ErrBroken }

// ErrBroken matches (errors.Is) every *VerifyError: the chain does not verify.
var ErrBroken = errors.New("hash chain does not verify")

// ErrCut and ErrRewritten match (errors.Is) an *AnchorError of that kind.
var (
	ErrCut       = errors.New("hash chain was cut")
	ErrRewritten = errors.New("hash chain was rewritten")
)

// AnchorError reports a chain that no longer extends its anchored head (FORMAT.md §7): it was
// cut (fewer entries than the anchor recorded) or rewritten (a different history).
type AnchorError struct {
	File         string // the chain file
	Anchor       string // the anchor file
	AnchoredSize int64  // entries the anchored head covered
	Size         int64  // entries the chain has now
	Cut          bool   // true: cut; false: rewritten
	Detail       string
}

func (e *AnchorError) Error() string {
	fix := fmt.Sprintf("restore the chain from a backup or an export; if the change was intended, remove the anchor %s to accept the chain as it is now", e.Anchor)
	if e.Cut {
		return fmt.Sprintf("%s was cut: it has %d entries, but its anchored head (%s) recorded %d%s: %s", e.File, e.Size, e.Anchor, e.AnchoredSize, detailSuffix(e.Detail), fix)
	}
	return fmt.Sprintf("%s was rewritten: it has %d entries, but its first %d no longer hash to the root its anchored head (%s) recorded%s: %s", e.File, e.Size, e.AnchoredSize, e.Anchor, detailSuffix(e.Detail), fix)
}

// Unwrap lets errors.Is match ErrCut or ErrRewritten.
func (e *AnchorError) Unwrap() error {
	if e.Cut {
		return ErrCut
	}
	return ErrRewritten
}

func detailSuffix(d string) string {
	if d == "" {
		return ""
	}
	return " (" + d + ")"
}

// ErrTorn matches (errors.Is) a *TornError.
var ErrTorn = errors.New("hash chain ends in a torn line")

// TornError reports a chain whose last line is torn (FORMAT.md §8): bytes after the last LF, or a
// last line that does not parse. Appends refuse to write after it; Recover moves it aside.
type TornError struct {
	File   string
	Offset int64  // where the torn bytes begin
	Bytes  int64  // how many
	Line   int64  // their 1-based line number; -1 when unknown
	Reason string // "no final newline" or why the line does not parse
}

func (e *TornError) Error() string {
	line := ""
	if e.Line > 0 {
		line = fmt.Sprintf(" %d", e.Line)
	}
	return fmt.Sprintf("%s ends in a torn line%s (%d bytes at offset %d: %s): a write was cut short by a crash and never acknowledged; nothing is appended after it until a person recovers it (agent-rewind chain recover moves the bytes aside and records that on the chain)", e.File, line, e.Bytes, e.Offset, e.Reason)
}

// Unwrap lets errors.Is match ErrTorn.
func (e *TornError) Unwrap() error { return ErrTorn }

// ErrBadData matches (errors.Is) an Append whose data is not acceptable: not a JSON object, a
// number that canonical JSON would change, too deep, or a line over the size limit.
var ErrBadData = errors.New("entry data not acceptable")

// BrokenError is what a writer (Open, Append, and the readers that sync with the file) returns
// for a chain that does not verify before its tail (FORMAT.md §8.1): a line deleted, edited or
// moved in the middle. Nothing is appended to such a chain. It wraps the *VerifyError that
// locates the first bad line (errors.As finds it; errors.Is(err, ErrBroken) is true).
type BrokenError struct {
	*VerifyError
	Anchor string // the chain's anchor file, "" when it has none
}

func (e *BrokenError) Error() string {
	anchor := ""
	if e.Anchor != "" {
		anchor = " and remove the anchor " + e.Anchor
	}
	return fmt.Sprintf("the hash chain is broken, so nothing more is recorded on it: %s. Run \"agent-rewind chain verify\" to see the first bad line; then restore %s from a backup or an export, or keep it as evidence by moving it (and the files beside it named like it) aside%s, which starts a new chain",
		e.VerifyError.Error(), e.File, anchor)
}

// Unwrap returns the *VerifyError.
func (e *BrokenError) Unwrap() error { return e.VerifyError }
