package analyze

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// Errors returned by this package, matchable with errors.Is. Their messages hold fixed
// reasons, positions, byte counts and SHA-256 digests: never input bytes or file paths.
var (
	// ErrLimit: the input crossed one of the Limits. The error is a *LimitError.
	ErrLimit = errors.New("analysis limit exceeded")
	// ErrInvalidRecord: a record is not valid JSON or not a record. The error is a
	// *RecordError.
	ErrInvalidRecord = errors.New("invalid capture record")
	// ErrInvalidTokenCount: a usage token count is negative, fractional, not a number or
	// absurdly large. The error is a *RecordError.
	ErrInvalidTokenCount = errors.New("invalid token count")
	// ErrCounterOverflow: a report counter would overflow.
	ErrCounterOverflow = errors.New("report counter overflow")
	// ErrInvalidOptions: Options hold a bad value (for example a malformed --origin).
	ErrInvalidOptions = errors.New("invalid analysis options")
)

// LimitError says which limit was crossed, by how much, and where.
type LimitError struct {
	Limit   string // "record bytes", "total bytes", "array bytes", "request keys" or "scopes"
	Max     int64  // the limit
	Got     int64  // the value that crossed it (at least Max+1; for bytes, how many were seen)
	AtLeast bool   // Got is a lower bound: reading stopped there
	// Record is the 1-based line (NDJSON) or element (array) number, 0 when not about one.
	Record int64
	// RecordSHA256 is the digest of the record's bytes, when the limit is about one record.
	RecordSHA256 [32]byte
	// SourceBytes and SourceSHA256 cover the input read up to the point of failure.
	SourceBytes  int64
	SourceSHA256 [32]byte
}

func (e *LimitError) Error() string {
	got := fmt.Sprint(e.Got)
	if e.AtLeast {
		got = "at least " + got
	}
	msg := fmt.Sprintf("%v: %s is %s, over the limit of %d", ErrLimit, e.Limit, got, e.Max)
	if e.Record > 0 {
		msg += fmt.Sprintf(" (record %d", e.Record)
		if e.RecordSHA256 != ([32]byte{}) {
			msg += ", sha256 " + hex.EncodeToString(e.RecordSHA256[:])
		}
		msg += ")"
	}
	msg += fmt.Sprintf("; input read: %d bytes, sha256 %s", e.SourceBytes, hex.EncodeToString(e.SourceSHA256[:]))
	return msg + "; split the capture or analyse a shorter time window"
}

// Unwrap makes a *LimitError match ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// RecordError is a record the analysis cannot accept.
type RecordError struct {
	Err    error  // ErrInvalidRecord or ErrInvalidTokenCount
	Reason string // a fixed description, never input bytes
	Record int64  // 1-based line (NDJSON) or element (array) number
	Offset int64  // byte offset of the record in the input
	Bytes  int64  // the record's length
	SHA256 [32]byte
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%v: record %d (%d bytes at offset %d, sha256 %s): %s",
		e.Err, e.Record, e.Bytes, e.Offset, hex.EncodeToString(e.SHA256[:]), e.Reason)
}

// Unwrap returns ErrInvalidRecord or ErrInvalidTokenCount.
func (e *RecordError) Unwrap() error { return e.Err }
