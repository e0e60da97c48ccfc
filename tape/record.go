package tape

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ncruces/go-sqlite3"
)

// Recorder appends calls to one epoch. It holds the epoch's recording lock (see [Tape.Recorder])
// until Close.
type Recorder struct {
	t     *Tape
	epoch string
	lock  *fileLock
}

// Recorder starts recording epoch. Only one Recorder per tenant and epoch may exist at a time,
// across processes: it takes an exclusive flock on Dir/<tenant>/locks/<epoch>.record, and a second
// recorder, in this process or another, is refused with ErrConflict. Recording into different
// epochs of one tenant at once is allowed (SQLite serialises the commits).
func (t *Tape) Recorder(epoch string) (*Recorder, error) {
	if err := ValidateName("epoch", epoch); err != nil {
		return nil, err
	}
	l, err := tryLock(filepath.Join(t.dir, LockDirName, epoch+".record"),
		fmt.Sprintf("recording epoch %q of tenant %q", epoch, t.opts.Tenant))
	if err != nil {
		return nil, err
	}
	if err := t.track(l); err != nil {
		l.unlock()
		return nil, err
	}
	return &Recorder{t: t, epoch: epoch, lock: l}, nil
}

// Epoch is the epoch this Recorder appends to.
func (r *Recorder) Epoch() string { return r.epoch }

// Close releases the recording lock. Calls already recorded stay recorded.
func (r *Recorder) Close() error { return r.t.untrack(r.lock) }

// Record appends call at the epoch's next position and returns that position. The record is
// committed and synced to disk (one SQLite transaction, synchronous=FULL) before Record returns,
// so a caller that holds back the response until then never serves a call the tape lost.
// Identical calls are appended as distinct occurrences.
//
// Only the request's answer headers are stored (and hashed); response headers lose those in
// DroppedResponseHeaders. Errors: ErrTooLarge (a body over Options.MaxBody: the call is not
// eligible; pass it through unrecorded), ErrInvalid, ErrQueueFull, ErrConflict, ErrStorage,
// ErrCorrupt, ErrClosed, or ctx's error while waiting for a turn.
func (r *Recorder) Record(ctx context.Context, call Call) (position int64, err error) {
	t := r.t
	if err := checkCall(call, t.opts.MaxBody); err != nil {
		return 0, err
	}
	reqHeaders := pickHeaders(call.Request.Header, t.opts.AnswerHeaders, true)
	h := hashCanonical(call.Request.Method, call.Request.Path, reqHeaders, call.Request.hashedBody())
	reqPlain := encodeRequest(h, call.Request.Method, call.Request.Path, reqHeaders, call.Request.Body)
	respPlain := encodeResponse(call.Response.Status, pickHeaders(call.Response.Header, DroppedResponseHeaders, false), call.Response.Body)
	tag := t.seal.requestTag(h)

	release, err := t.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	if t.isClosed(r.lock) {
		return 0, fmt.Errorf("%w: the recorder of epoch %q was closed", ErrClosed, r.epoch)
	}
	err = t.inTx(func() error {
		if err := t.query(sqlNextPosition, []any{r.epoch}, func(s *sqlite3.Stmt) error {
			position = s.ColumnInt64(0)
			return nil
		}); err != nil {
			return err
		}
		// Seal once the position is known: it is part of the additional data.
		req := t.seal.seal(reqPlain, t.seal.ad(r.epoch, position, kindRequest, nil))
		resp := t.seal.seal(respPlain, t.seal.ad(r.epoch, position, kindResponse, tag))
		return t.exec(sqlInsertRecord, r.epoch, position, tag, resp, req)
	})
	if err != nil {
		return 0, t.sqlError(fmt.Sprintf("record epoch %q", r.epoch), err)
	}
	return position, nil
}

// checkCall rejects a call the tape cannot store faithfully.
func checkCall(c Call, maxBody int) error {
	if n := len(c.Request.Body); n > maxBody {
		return fmt.Errorf("%w: the request body is %d bytes, over the %d-byte eligibility limit (Options.MaxBody): pass the call through unrecorded", ErrTooLarge, n, maxBody)
	}
	if n := len(c.Response.Body); n > maxBody {
		return fmt.Errorf("%w: the response body is %d bytes, over the %d-byte eligibility limit (Options.MaxBody): pass the call through unrecorded", ErrTooLarge, n, maxBody)
	}
	if s := c.Response.Status; s < 100 || s > 999 {
		return fmt.Errorf("%w: response status %d is not an HTTP status code", ErrInvalid, s)
	}
	return checkRequest(c.Request)
}

func checkRequest(r Request) error {
	if r.Method == "" || len(r.Method) > 32 || strings.ContainsFunc(r.Method, func(c rune) bool { return c <= ' ' || c >= 0x7f }) {
		return fmt.Errorf("%w: request method %q is not an HTTP method", ErrInvalid, r.Method)
	}
	if !strings.HasPrefix(r.Path, "/") || len(r.Path) > 8<<10 {
		return fmt.Errorf("%w: request path %q must start with '/' and be at most 8 KiB (the path and query as sent)", ErrInvalid, r.Path)
	}
	return nil
}
