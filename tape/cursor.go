package tape

import (
	"context"
	"crypto/hmac"
	"fmt"
	"path/filepath"

	"github.com/ncruces/go-sqlite3"
)

// Cursor replays one epoch's recorded responses in order under a name. Its position (the next
// position to serve) and the request ids it has served are stored in the database, so a cursor
// resumes where it stopped across Close, Open and process restarts.
type Cursor struct {
	t           *Tape
	epoch, name string
	lock        *fileLock
}

// Replayed is one response served by a Cursor.
type Replayed struct {
	// Position is the recorded position the response comes from.
	Position int64
	// Response is the recorded response, byte for byte (an SSE body is the exact stream).
	Response Response
	// Retried is true when the request id had already been served: the same response was
	// returned again and no position was consumed.
	Retried bool
}

// Cursor opens the cursor name over epoch (see [ValidateName]); a new name starts at position 0.
// A cursor is consumed by one handle at a time: it takes an exclusive flock on
// Dir/<tenant>/locks/<epoch>.cursor.<name>, and a second handle, in this process or another, is
// refused with ErrConflict (two consumers would interleave one sequence). Replaying an epoch
// while it is being recorded is allowed: the cursor reaches the end, and continues when more
// calls are committed.
func (t *Tape) Cursor(epoch, name string) (*Cursor, error) {
	if err := ValidateName("epoch", epoch); err != nil {
		return nil, err
	}
	if err := ValidateName("cursor", name); err != nil {
		return nil, err
	}
	l, err := tryLock(filepath.Join(t.dir, LockDirName, epoch+".cursor."+name),
		fmt.Sprintf("cursor %q over epoch %q of tenant %q", name, epoch, t.opts.Tenant))
	if err != nil {
		return nil, err
	}
	if err := t.track(l); err != nil {
		l.unlock()
		return nil, err
	}
	return &Cursor{t: t, epoch: epoch, name: name, lock: l}, nil
}

// Name is the cursor's name.
func (c *Cursor) Name() string { return c.name }

// Epoch is the epoch the cursor replays.
func (c *Cursor) Epoch() string { return c.epoch }

// Close releases the cursor's lock; its position stays stored.
func (c *Cursor) Close() error { return c.t.untrack(c.lock) }

// Position returns the next position the cursor will serve (0 for a new cursor).
func (c *Cursor) Position(ctx context.Context) (int64, error) {
	release, err := c.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	pos, err := c.position()
	if err != nil {
		return 0, c.t.sqlError("read cursor", err)
	}
	return pos, nil
}

// Next serves the response recorded at the cursor's position for req, and advances the cursor.
//
// req must have the canonical hash (see [RequestHash]) of the request recorded there; if not,
// Next returns a *MissError (errors.Is ErrStrictMiss) and the cursor does not move. Past the
// last recorded call it returns an *EndError (errors.Is ErrEndOfTape).
//
// requestID ("" for none; see [ValidateRequestID]) names the logical call: once served, the
// same id returns the same response again (Retried set) without consuming a position, so a client
// that lost a response retries safely. Serving, advancing and remembering the id are one
// transaction: after a crash either all happened or none did.
//
// Other errors: ErrTampered (the record failed authentication), ErrCorrupt, ErrInvalid,
// ErrQueueFull, ErrConflict, ErrStorage, ErrClosed, or ctx's error while waiting for a turn.
func (c *Cursor) Next(ctx context.Context, requestID string, req Request) (Replayed, error) {
	t := c.t
	if err := checkRequest(req); err != nil {
		return Replayed{}, err
	}
	if requestID != "" {
		if err := ValidateRequestID(requestID); err != nil {
			return Replayed{}, err
		}
	}
	h := RequestHash(req, t.opts.AnswerHeaders)
	tag := t.seal.requestTag(h)

	release, err := c.begin(ctx)
	if err != nil {
		return Replayed{}, err
	}
	defer release()
	var out Replayed
	err = t.inTx(func() error {
		if requestID != "" {
			pos, found, err := c.servedAt(requestID)
			if err != nil {
				return err
			}
			if found {
				resp, err := c.serve(pos, h, tag, requestID)
				out = Replayed{Position: pos, Response: resp, Retried: true}
				return err
			}
		}
		pos, err := c.position()
		if err != nil {
			return err
		}
		resp, err := c.serve(pos, h, tag, "")
		if err != nil {
			return err
		}
		if err := t.exec(sqlSetCursor, c.epoch, c.name, pos+1, t.seal.cursorMAC(c.epoch, c.name, pos+1)); err != nil {
			return err
		}
		if requestID != "" {
			if err := t.exec(sqlSetRequestID, c.epoch, c.name, requestID, pos, t.seal.requestIDMAC(c.epoch, c.name, requestID, pos)); err != nil {
				return err
			}
		}
		out = Replayed{Position: pos, Response: resp}
		return nil
	})
	if err != nil {
		return Replayed{}, t.sqlError(fmt.Sprintf("replay cursor %q of epoch %q", c.name, c.epoch), err)
	}
	return out, nil
}

func (c *Cursor) begin(ctx context.Context) (func(), error) {
	release, err := c.t.begin(ctx)
	if err != nil {
		return nil, err
	}
	if c.t.isClosed(c.lock) {
		release()
		return nil, fmt.Errorf("%w: cursor %q of epoch %q was closed", ErrClosed, c.name, c.epoch)
	}
	return release, nil
}

// position reads and authenticates the cursor's position.
func (c *Cursor) position() (int64, error) {
	t := c.t
	var pos int64
	var mac []byte
	found := false
	err := t.query(sqlCursor, []any{c.epoch, c.name}, func(s *sqlite3.Stmt) error {
		found = true
		pos = s.ColumnInt64(0)
		mac = s.ColumnBlob(1, nil)
		return nil
	})
	if err != nil || !found {
		return 0, err
	}
	if !hmac.Equal(mac, t.seal.cursorMAC(c.epoch, c.name, pos)) {
		return 0, fmt.Errorf("%w: the stored position (%d) of cursor %q over epoch %q in %s does not authenticate: it was altered; replay with a new cursor, or restore the file from a backup", ErrTampered, pos, c.name, c.epoch, t.path)
	}
	return pos, nil
}

// servedAt looks up a request id this cursor already served.
func (c *Cursor) servedAt(id string) (pos int64, found bool, err error) {
	t := c.t
	var mac []byte
	err = t.query(sqlRequestID, []any{c.epoch, c.name, id}, func(s *sqlite3.Stmt) error {
		found = true
		pos = s.ColumnInt64(0)
		mac = s.ColumnBlob(1, nil)
		return nil
	})
	if err != nil || !found {
		return 0, false, err
	}
	if !hmac.Equal(mac, t.seal.requestIDMAC(c.epoch, c.name, id, pos)) {
		return 0, false, fmt.Errorf("%w: the stored position (%d) of request id %q on cursor %q over epoch %q does not authenticate: it was altered; replay with a new cursor", ErrTampered, pos, id, c.name, c.epoch)
	}
	return pos, true, nil
}

// serve opens the response recorded at pos after checking that it answers the request with
// hash h (tag is h's request tag).
func (c *Cursor) serve(pos int64, h Hash, tag []byte, requestID string) (Response, error) {
	t := c.t
	var storedTag, plain []byte
	found, sealedOK := false, false
	err := t.query(sqlResponse, []any{c.epoch, pos}, func(s *sqlite3.Stmt) error {
		found = true
		storedTag = s.ColumnBlob(0, nil)
		if hmac.Equal(storedTag, tag) {
			// Open straight from SQLite's buffer: no copy of the ciphertext.
			plain, sealedOK = t.seal.open(s.ColumnRawBlob(1), t.seal.ad(c.epoch, pos, kindResponse, storedTag))
		}
		return nil
	})
	if err != nil {
		return Response{}, err
	}
	if !found {
		return Response{}, c.end(pos)
	}
	if !hmac.Equal(storedTag, tag) {
		return Response{}, c.miss(pos, h, storedTag, requestID)
	}
	if !sealedOK {
		return Response{}, tamperedError(t, c.epoch, pos, "response")
	}
	resp, err := decodeResponse(plain)
	if err != nil {
		return Response{}, fmt.Errorf("%w: the response at position %d of epoch %q authenticates but does not decode (%v): it was written by a faulty program; restore the file from a backup", ErrCorrupt, pos, c.epoch, err)
	}
	return resp, nil
}

// end reports the end of the tape, or a gap if a later position exists.
func (c *Cursor) end(pos int64) error {
	n, err := c.t.length(c.epoch)
	if err != nil {
		return err
	}
	if n > pos {
		return fmt.Errorf("%w: position %d of epoch %q is missing but the epoch has %d positions: a record was deleted; restore the file from a backup", ErrCorrupt, pos, c.epoch, n)
	}
	// The end is rare, so it can afford a table scan that a damaged index cannot shorten.
	if err := c.t.checkLength(c.epoch, pos); err != nil {
		return err
	}
	return &EndError{Tenant: c.t.opts.Tenant, Epoch: c.epoch, Cursor: c.name, Position: pos}
}

// miss builds the strict-miss error, reading the recorded request's hash from its sealed
// request (the database holds only keyed tags). A recorded request whose hash is the one sent
// means the stored tag was altered, which is tampering, not a miss.
func (c *Cursor) miss(pos int64, got Hash, storedTag []byte, requestID string) error {
	t := c.t
	e, err := t.entry(c.epoch, pos)
	if err != nil {
		return err
	}
	if e.Hash == got {
		return tamperedError(t, c.epoch, pos, "request tag")
	}
	return &MissError{Tenant: t.opts.Tenant, Epoch: c.epoch, Cursor: c.name, Position: pos, Recorded: e.Hash, Got: got, RequestID: requestID}
}

func tamperedError(t *Tape, epoch string, pos int64, what string) error {
	return fmt.Errorf("%w: the %s at position %d of epoch %q in %s does not authenticate: it was altered, or moved from another position, epoch or tenant; restore the file from a backup, or record the epoch again", ErrTampered, what, pos, epoch, t.path)
}
