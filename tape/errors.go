package tape

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the package returns for one of these conditions matches its
// sentinel with errors.Is, and carries a message that names the value and what to do.
//
// The four key and store errors are deliberately distinct so that an operator can tell "I forgot
// the key" from "I used another key" from "the file is damaged": none of them ever falls back to
// an in-memory tape.
var (
	// ErrKeyMissing: REWIND_STORAGE_KEY is unset or empty and Options.Key is nil.
	ErrKeyMissing = errors.New("tape: storage key missing")
	// ErrKeyMalformed: the key is not exactly 64 hexadecimal characters (32 bytes).
	ErrKeyMalformed = errors.New("tape: storage key malformed")
	// ErrWrongKey: the key is well formed but is not the key this tenant's store was created with.
	ErrWrongKey = errors.New("tape: wrong storage key")
	// ErrCorrupt: the database file is not a tape database, or is damaged (SQLite reports
	// corruption, the key check does not verify, a position is missing in the middle of an epoch).
	ErrCorrupt = errors.New("tape: database corrupt")
	// ErrTampered: one record (or cursor row) failed its authentication: its ciphertext or the
	// data bound to it (tenant, epoch, position, kind) was altered, or it was moved or swapped.
	ErrTampered = errors.New("tape: record failed authentication")
	// ErrNewerFormat: the database was written by a newer schema version than this code knows.
	ErrNewerFormat = errors.New("tape: database format is newer than this program")

	// ErrConflict: another process (or another handle in this process) already records this
	// epoch or replays this cursor, or the database stayed locked past the busy timeout.
	ErrConflict = errors.New("tape: conflict")
	// ErrStorage: the file system refused an operation (I/O error, disk full, permissions).
	ErrStorage = errors.New("tape: storage failure")
	// ErrQueueFull: more than MaxQueue operations are already waiting for their turn.
	ErrQueueFull = errors.New("tape: queue full")
	// ErrClosed: the Tape, Recorder or Cursor was closed.
	ErrClosed = errors.New("tape: closed")

	// ErrStrictMiss: a replayed request does not match the recorded one (see [MissError]).
	ErrStrictMiss = errors.New("tape: strict miss")
	// ErrEndOfTape: a cursor asked for a position past the last recorded one (see [EndError]).
	ErrEndOfTape = errors.New("tape: end of tape")
	// ErrTooLarge: a request or response body is larger than Options.MaxBody; the call is not
	// eligible for the tape.
	ErrTooLarge = errors.New("tape: body too large to record")
	// ErrInvalid: a caller-supplied value (a name, a request id, an option, a call) is invalid.
	ErrInvalid = errors.New("tape: invalid argument")
)

// MissError is a strict miss: the request a cursor was given does not have the canonical hash of
// the request recorded at the cursor's position. It names hashes, never bodies, so it is safe to
// log and to return to a client. The cursor did not move.
type MissError struct {
	Tenant, Epoch, Cursor string
	// Position is the recorded position the request was compared with.
	Position int64
	// Recorded is the canonical hash of the request recorded at Position.
	Recorded Hash
	// Got is the canonical hash of the request that was sent.
	Got Hash
	// RequestID is set when the miss comes from a retry: the request id was already served at
	// Position for a different request.
	RequestID string
}

func (e *MissError) Error() string {
	if e.RequestID != "" {
		return fmt.Sprintf("tape: strict miss on cursor %q (tenant %q, epoch %q): request id %q was served at position %d for request %s, but this request hashes to %s; use a new request id for a new call, and reuse one only to retry the same call",
			e.Cursor, e.Tenant, e.Epoch, e.RequestID, e.Position, e.Recorded, e.Got)
	}
	return fmt.Sprintf("tape: strict miss on cursor %q (tenant %q, epoch %q) at position %d: recorded request %s, got %s; the cursor did not move: send the recorded request, or replay with a new cursor",
		e.Cursor, e.Tenant, e.Epoch, e.Position, e.Recorded, e.Got)
}

// Is makes errors.Is(err, ErrStrictMiss) true.
func (e *MissError) Is(target error) bool { return target == ErrStrictMiss }

// EndError reports a cursor that has consumed every recorded response of its epoch.
type EndError struct {
	Tenant, Epoch, Cursor string
	// Position is the cursor's position, which equals the number of recorded calls.
	Position int64
}

func (e *EndError) Error() string {
	return fmt.Sprintf("tape: cursor %q (tenant %q, epoch %q) is at the end of the tape: all %d recorded calls were replayed; record more calls in this epoch, or replay with a new cursor",
		e.Cursor, e.Tenant, e.Epoch, e.Position)
}

// Is makes errors.Is(err, ErrEndOfTape) true.
func (e *EndError) Is(target error) bool { return target == ErrEndOfTape }
