package tape

import (
	"context"
	"crypto/hmac"
	"fmt"

	"github.com/ncruces/go-sqlite3"
)

// Entry is one recorded call, read back for review or verification.
type Entry struct {
	// Position is the call's position in its epoch.
	Position int64
	// Hash is the canonical hash of the recorded request.
	Hash Hash
	// Call holds the stored request (answer headers only) and the stored response.
	Call Call
}

// Len returns the number of calls recorded in epoch (positions 0 to Len-1).
func (t *Tape) Len(ctx context.Context, epoch string) (int64, error) {
	if err := ValidateName("epoch", epoch); err != nil {
		return 0, err
	}
	release, err := t.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	n, err := t.length(epoch)
	if err != nil {
		return 0, t.sqlError(fmt.Sprintf("count epoch %q", epoch), err)
	}
	return n, nil
}

func (t *Tape) length(epoch string) (n int64, err error) {
	err = t.query(sqlNextPosition, []any{epoch}, func(s *sqlite3.Stmt) error {
		n = s.ColumnInt64(0)
		return nil
	})
	return n, err
}

// Epochs lists the epochs that have at least one recorded call, in byte order.
func (t *Tape) Epochs(ctx context.Context) ([]string, error) {
	release, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	var out []string
	err = t.query(`SELECT DISTINCT epoch FROM records ORDER BY epoch`, nil, func(s *sqlite3.Stmt) error {
		out = append(out, s.ColumnText(0))
		return nil
	})
	if err != nil {
		return nil, t.sqlError("list epochs", err)
	}
	return out, nil
}

// Entry reads and authenticates the call recorded at position of epoch. A position past the end
// is ErrEndOfTape; a record that does not authenticate is ErrTampered.
func (t *Tape) Entry(ctx context.Context, epoch string, position int64) (Entry, error) {
	if err := ValidateName("epoch", epoch); err != nil {
		return Entry{}, err
	}
	release, err := t.begin(ctx)
	if err != nil {
		return Entry{}, err
	}
	defer release()
	e, err := t.entry(epoch, position)
	if err != nil {
		return Entry{}, t.sqlError(fmt.Sprintf("read position %d of epoch %q", position, epoch), err)
	}
	return e, nil
}

func (t *Tape) entry(epoch string, pos int64) (Entry, error) {
	var e Entry
	found := false
	var openErr error
	err := t.query(sqlRecord, []any{epoch, pos}, func(s *sqlite3.Stmt) error {
		found = true
		e, openErr = t.openRecord(epoch, pos, s.ColumnRawBlob(0), s.ColumnRawBlob(1), s.ColumnRawBlob(2))
		return nil
	})
	if err != nil {
		return Entry{}, err
	}
	if !found {
		n, err := t.length(epoch)
		if err != nil {
			return Entry{}, err
		}
		if pos >= 0 && pos < n {
			return Entry{}, fmt.Errorf("%w: position %d of epoch %q is missing but the epoch has %d positions: a record was deleted; restore the file from a backup", ErrCorrupt, pos, epoch, n)
		}
		return Entry{}, fmt.Errorf("%w: epoch %q has %d recorded calls; there is no position %d", ErrEndOfTape, epoch, n, pos)
	}
	return e, openErr
}

// openRecord authenticates and decodes one row's sealed values. The byte slices may be SQLite's
// own buffers: they are only read.
func (t *Tape) openRecord(epoch string, pos int64, tag, sealedResp, sealedReq []byte) (Entry, error) {
	reqPlain, ok := t.seal.open(sealedReq, t.seal.ad(epoch, pos, kindRequest, nil))
	if !ok {
		return Entry{}, tamperedError(t, epoch, pos, "request")
	}
	req, err := decodeRequest(reqPlain)
	if err != nil {
		return Entry{}, fmt.Errorf("%w: the request at position %d of epoch %q authenticates but does not decode (%v): restore the file from a backup", ErrCorrupt, pos, epoch, err)
	}
	if !hmac.Equal(tag, t.seal.requestTag(req.hash)) {
		return Entry{}, tamperedError(t, epoch, pos, "request tag")
	}
	respPlain, ok := t.seal.open(sealedResp, t.seal.ad(epoch, pos, kindResponse, tag))
	if !ok {
		return Entry{}, tamperedError(t, epoch, pos, "response")
	}
	resp, err := decodeResponse(respPlain)
	if err != nil {
		return Entry{}, fmt.Errorf("%w: the response at position %d of epoch %q authenticates but does not decode (%v): restore the file from a backup", ErrCorrupt, pos, epoch, err)
	}
	return Entry{
		Position: pos,
		Hash:     req.hash,
		Call: Call{
			Request:  Request{Method: req.method, Path: req.path, Header: fieldsToHeader(req.headers), Body: req.body},
			Response: resp,
		},
	}, nil
}

// Verify checks the whole database with SQLite's integrity_check (which also compares every
// index with its table), then reads and authenticates every call of epoch and checks that
// positions run from 0 without a gap. It returns the number of calls. It holds the tape's turn for the whole check, so it is for audits and tests, not for
// a busy proxy.
func (t *Tape) Verify(ctx context.Context, epoch string) (int64, error) {
	if err := ValidateName("epoch", epoch); err != nil {
		return 0, err
	}
	release, err := t.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	n, err := t.verify(epoch)
	if err != nil {
		return 0, t.sqlError(fmt.Sprintf("verify epoch %q", epoch), err)
	}
	return n, nil
}

func (t *Tape) verify(epoch string) (int64, error) {
	var problems []string
	err := t.query(`PRAGMA integrity_check`, nil, func(s *sqlite3.Stmt) error {
		if msg := s.ColumnText(0); msg != "ok" {
			problems = append(problems, msg)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(problems) > 0 {
		return 0, fmt.Errorf("%w: %s: integrity_check: %s: restore the file from a backup", ErrCorrupt, t.path, problems[0])
	}
	var n int64
	err = t.query(`SELECT position, request_tag, response, request FROM records WHERE epoch = ? ORDER BY position`, []any{epoch}, func(s *sqlite3.Stmt) error {
		pos := s.ColumnInt64(0)
		if pos != n {
			return fmt.Errorf("%w: epoch %q has position %d where %d was expected: a record is missing; restore the file from a backup", ErrCorrupt, epoch, pos, n)
		}
		if _, err := t.openRecord(epoch, pos, s.ColumnRawBlob(1), s.ColumnRawBlob(2), s.ColumnRawBlob(3)); err != nil {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := t.checkLength(epoch, n); err != nil {
		return 0, err
	}
	return n, nil
}

// checkLength compares n, the length of epoch found through the (epoch, position) index, with
// what a scan of the table itself finds, so that a damaged index cannot silently shorten a
// tape.
func (t *Tape) checkLength(epoch string, n int64) error {
	var scanned int64
	err := t.query(`SELECT COALESCE(MAX(position) + 1, 0) FROM records NOT INDEXED WHERE epoch = ?`, []any{epoch}, func(s *sqlite3.Stmt) error {
		scanned = s.ColumnInt64(0)
		return nil
	})
	if err != nil {
		return err
	}
	if scanned != n {
		return fmt.Errorf("%w: %s: the index of epoch %q finds %d calls but the table holds positions up to %d: restore the file from a backup", ErrCorrupt, t.path, epoch, n, scanned-1)
	}
	return nil
}
