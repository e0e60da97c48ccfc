package pgtape

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"

	"github.com/agent-rewind/rewind/tape"
	"github.com/jackc/pgx/v5"
)

// Tape is one tenant's tape in the shared database. Unlike the SQLite tape, any number of
// Recorders and Cursors over one epoch may exist at once, in any replica: the database orders
// them (a recorder's position comes from a row lock on the epoch's counter, a cursor's turn from
// a row lock on the cursor), so concurrent calls through several replicas get distinct
// consecutive positions, and a cursor serves each position once.
type Tape struct {
	s     *Store
	codec *tape.Codec
}

// Tape opens tenant's tape: it checks the schema and the tenant's key (creating the tenant's key
// check row on first use). Errors: tape.ErrInvalid, ErrMigrationsPending, tape.ErrNewerFormat,
// tape.ErrWrongKey (the deployment key changed), tape.ErrCorrupt, tape.ErrStorage.
func (s *Store) Tape(ctx context.Context, tenant string) (*Tape, error) {
	if err := tape.ValidateName("tenant", tenant); err != nil {
		return nil, err
	}
	if s.keyErr != nil {
		return nil, s.keyErr
	}
	key, err := TenantKey(s.depKey, tenant)
	if err != nil {
		return nil, err
	}
	o := s.options
	o.Tenant = tenant
	c, err := tape.NewCodec(key, o, s.name, "set "+DeploymentKeyEnv+" to the deployment key the tenant was created with")
	if err != nil {
		return nil, err
	}
	if err := s.CheckSchema(ctx); err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO rewind_tenants (tenant, key_id, key_check) VALUES ($1, $2, $3) ON CONFLICT (tenant) DO NOTHING`,
		tenant, c.KeyID(), c.KeyCheck()); err != nil {
		return nil, s.dbError(fmt.Sprintf("register tenant %q", tenant), err)
	}
	var keyID, check []byte
	if err := s.pool.QueryRow(ctx, `SELECT key_id, key_check FROM rewind_tenants WHERE tenant = $1`, tenant).Scan(&keyID, &check); err != nil {
		return nil, s.dbError(fmt.Sprintf("read tenant %q's key check", tenant), err)
	}
	if err := c.CheckKey(keyID, check); err != nil {
		return nil, err
	}
	return &Tape{s: s, codec: c}, nil
}

// Tenant is the tape's tenant.
func (t *Tape) Tenant() string { return t.codec.Tenant() }

// Recorder appends calls to epoch.
type Recorder struct {
	t     *Tape
	epoch string
}

// Recorder returns a recorder of epoch. Several may record one epoch at once.
func (t *Tape) Recorder(epoch string) (*Recorder, error) {
	if err := tape.ValidateName("epoch", epoch); err != nil {
		return nil, err
	}
	return &Recorder{t: t, epoch: epoch}, nil
}

// Epoch is the epoch this Recorder appends to.
func (r *Recorder) Epoch() string { return r.epoch }

// Close does nothing: a PostgreSQL recorder holds no lock between calls.
func (r *Recorder) Close() error { return nil }

// Record appends call at the epoch's next position and returns it, once committed (PostgreSQL's
// commit is durable with synchronous_commit on, its default). The position counter, the record
// and nothing else are one transaction: a failed or killed commit leaves neither, so positions
// have no gap. Errors as tape's Recorder.Record, with tape.ErrStorage when the database is
// unreachable (the caller answers 503 and does not serve an unrecorded call).
//
// It makes two round trips, the fewest the sealing allows (the record is sealed under its
// position): BEGIN with the counter's increment, then the record with COMMIT, each a pipelined
// batch.
func (r *Recorder) Record(ctx context.Context, call tape.Call) (int64, error) {
	t := r.t
	p, err := t.codec.Prepare(call)
	if err != nil {
		return 0, err
	}
	pos, err := r.record(ctx, p)
	if err != nil {
		return 0, t.s.dbError(fmt.Sprintf("record epoch %q of tenant %q", r.epoch, t.Tenant()), err)
	}
	return pos, nil
}

func (r *Recorder) record(ctx context.Context, p *tape.Prepared) (pos int64, err error) {
	t := r.t
	conn, err := t.s.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	// A connection left in a transaction by a failure is closed, not reused, by the pool: the
	// server rolls the transaction back.
	defer conn.Release()
	var b pgx.Batch
	b.Queue(`BEGIN`)
	b.Queue(`INSERT INTO rewind_epochs (tenant, epoch, next) VALUES ($1, $2, 1)
		ON CONFLICT (tenant, epoch) DO UPDATE SET next = rewind_epochs.next + 1 RETURNING next - 1`,
		t.Tenant(), r.epoch).QueryRow(func(row pgx.Row) error { return row.Scan(&pos) })
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return 0, err
	}
	req, resp := p.Seal(r.epoch, pos)
	b = pgx.Batch{}
	b.Queue(`INSERT INTO rewind_records (tenant, epoch, position, request_tag, response, request) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.Tenant(), r.epoch, pos, p.Tag(), resp, req)
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return 0, err
	}
	if conn.Conn().PgConn().TxStatus() != 'I' {
		return 0, errors.New("the transaction did not commit")
	}
	return pos, nil
}

// Len returns the number of calls recorded in epoch.
func (t *Tape) Len(ctx context.Context, epoch string) (int64, error) {
	if err := tape.ValidateName("epoch", epoch); err != nil {
		return 0, err
	}
	n, err := t.length(ctx, t.s.pool, epoch)
	if err != nil {
		return 0, t.s.dbError(fmt.Sprintf("count epoch %q", epoch), err)
	}
	return n, nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (t *Tape) length(ctx context.Context, q querier, epoch string) (n int64, err error) {
	err = q.QueryRow(ctx, `SELECT COALESCE(MAX(position) + 1, 0) FROM rewind_records WHERE tenant = $1 AND epoch = $2`, t.Tenant(), epoch).Scan(&n)
	return n, err
}

// Cursor replays one epoch's recorded responses in order under a name; its position and the
// request ids it served are stored in the database, shared by every replica.
type Cursor struct {
	t           *Tape
	epoch, name string
}

// Cursor opens the cursor name over epoch; a new name starts at position 0. Several handles,
// in one replica or many, may serve one cursor: each Next takes the cursor's row lock, so they
// take turns and no position is served twice or skipped.
func (t *Tape) Cursor(epoch, name string) (*Cursor, error) {
	if err := tape.ValidateName("epoch", epoch); err != nil {
		return nil, err
	}
	if err := tape.ValidateName("cursor", name); err != nil {
		return nil, err
	}
	return &Cursor{t: t, epoch: epoch, name: name}, nil
}

// Name is the cursor's name.
func (c *Cursor) Name() string { return c.name }

// Epoch is the epoch the cursor replays.
func (c *Cursor) Epoch() string { return c.epoch }

// Close does nothing: the position is stored after every Next.
func (c *Cursor) Close() error { return nil }

// Position returns the next position the cursor will serve.
func (c *Cursor) Position(ctx context.Context) (int64, error) {
	pos, err := c.position(ctx, c.t.s.pool)
	if err != nil {
		return 0, c.t.s.dbError("read cursor", err)
	}
	return pos, nil
}

// Next serves the response recorded at the cursor's position for req and advances the cursor,
// with the semantics and errors of tape's Cursor.Next (a *tape.MissError, a *tape.EndError,
// request-id retries). Taking the cursor's row lock, serving, advancing and remembering the
// request id are one transaction, in three round trips: BEGIN with the lock (and the request
// id's earlier position), the record, then the advance with COMMIT.
func (c *Cursor) Next(ctx context.Context, requestID string, req tape.Request) (tape.Replayed, error) {
	t := c.t
	if requestID != "" {
		if err := tape.ValidateRequestID(requestID); err != nil {
			return tape.Replayed{}, err
		}
	}
	h, tag, err := t.codec.Match(req)
	if err != nil {
		return tape.Replayed{}, err
	}
	out, err := c.next(ctx, requestID, h, tag)
	if err != nil {
		return tape.Replayed{}, t.s.dbError(fmt.Sprintf("replay cursor %q of epoch %q", c.name, c.epoch), err)
	}
	return out, nil
}

func (c *Cursor) next(ctx context.Context, requestID string, h tape.Hash, tag []byte) (out tape.Replayed, err error) {
	t := c.t
	conn, err := t.s.pool.Acquire(ctx)
	if err != nil {
		return out, err
	}
	// A connection left in a transaction by a failure to roll back is closed, not reused, by
	// the pool: the server rolls the transaction back.
	defer conn.Release()
	defer func() {
		if err != nil && conn.Conn().PgConn().TxStatus() != 'I' {
			conn.Exec(context.WithoutCancel(ctx), `ROLLBACK`)
		}
	}()
	var pos, served int64
	var posMAC, servedMAC []byte
	found := false
	var b pgx.Batch
	b.Queue(`BEGIN`)
	// The cursor row exists from here on (a rolled-back Next removes it again), so that FOR
	// UPDATE has a row to lock: the turn of this cursor across every replica.
	b.Queue(`INSERT INTO rewind_cursors (tenant, epoch, name, position, mac) VALUES ($1, $2, $3, 0, $4) ON CONFLICT DO NOTHING`,
		t.Tenant(), c.epoch, c.name, t.codec.CursorMAC(c.epoch, c.name, 0))
	b.Queue(`SELECT position, mac FROM rewind_cursors WHERE tenant = $1 AND epoch = $2 AND name = $3 FOR UPDATE`,
		t.Tenant(), c.epoch, c.name).QueryRow(func(row pgx.Row) error { return row.Scan(&pos, &posMAC) })
	if requestID != "" {
		b.Queue(`SELECT position, mac FROM rewind_cursor_requests WHERE tenant = $1 AND epoch = $2 AND cursor = $3 AND request_id = $4`,
			t.Tenant(), c.epoch, c.name, requestID).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&served, &servedMAC)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			found = err == nil
			return err
		})
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return out, err
	}
	if err := c.checkPosition(pos, posMAC); err != nil {
		return out, err
	}
	if found {
		if err := c.checkServed(requestID, served, servedMAC); err != nil {
			return out, err
		}
		resp, err := c.serve(ctx, conn, served, h, tag, requestID)
		if err != nil {
			return out, err
		}
		if _, err := conn.Exec(ctx, `COMMIT`); err != nil {
			return out, err
		}
		return tape.Replayed{Position: served, Response: resp, Retried: true}, nil
	}
	resp, err := c.serve(ctx, conn, pos, h, tag, "")
	if err != nil {
		return out, err
	}
	b = pgx.Batch{}
	b.Queue(`UPDATE rewind_cursors SET position = $4, mac = $5 WHERE tenant = $1 AND epoch = $2 AND name = $3`,
		t.Tenant(), c.epoch, c.name, pos+1, t.codec.CursorMAC(c.epoch, c.name, pos+1))
	if requestID != "" {
		b.Queue(`INSERT INTO rewind_cursor_requests (tenant, epoch, cursor, request_id, position, mac) VALUES ($1, $2, $3, $4, $5, $6)`,
			t.Tenant(), c.epoch, c.name, requestID, pos, t.codec.RequestIDMAC(c.epoch, c.name, requestID, pos))
	}
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return out, err
	}
	if conn.Conn().PgConn().TxStatus() != 'I' {
		return out, errors.New("the transaction did not commit")
	}
	return tape.Replayed{Position: pos, Response: resp}, nil
}

// position reads and authenticates the cursor's position.
func (c *Cursor) position(ctx context.Context, q querier) (int64, error) {
	var pos int64
	var mac []byte
	err := q.QueryRow(ctx, `SELECT position, mac FROM rewind_cursors WHERE tenant = $1 AND epoch = $2 AND name = $3`, c.t.Tenant(), c.epoch, c.name).Scan(&pos, &mac)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return pos, c.checkPosition(pos, mac)
}

// checkPosition authenticates a stored cursor position.
func (c *Cursor) checkPosition(pos int64, mac []byte) error {
	if !hmac.Equal(mac, c.t.codec.CursorMAC(c.epoch, c.name, pos)) {
		return fmt.Errorf("%w: the stored position (%d) of cursor %q over epoch %q of tenant %q does not authenticate: it was altered; replay with a new cursor", tape.ErrTampered, pos, c.name, c.epoch, c.t.Tenant())
	}
	return nil
}

// checkServed authenticates the stored position at which request id was served.
func (c *Cursor) checkServed(id string, pos int64, mac []byte) error {
	if !hmac.Equal(mac, c.t.codec.RequestIDMAC(c.epoch, c.name, id, pos)) {
		return fmt.Errorf("%w: the stored position (%d) of request id %q on cursor %q over epoch %q does not authenticate: it was altered; replay with a new cursor", tape.ErrTampered, pos, id, c.name, c.epoch)
	}
	return nil
}

// serve opens the response recorded at pos after checking that it answers the request with
// hash h and tag tag.
func (c *Cursor) serve(ctx context.Context, q querier, pos int64, h tape.Hash, tag []byte, requestID string) (tape.Response, error) {
	t := c.t
	var storedTag, resp, req []byte
	err := q.QueryRow(ctx, `SELECT request_tag, response, request FROM rewind_records WHERE tenant = $1 AND epoch = $2 AND position = $3`,
		t.Tenant(), c.epoch, pos).Scan(&storedTag, &resp, &req)
	if errors.Is(err, pgx.ErrNoRows) {
		n, err := t.length(ctx, q, c.epoch)
		if err != nil {
			return tape.Response{}, err
		}
		if n > pos {
			return tape.Response{}, fmt.Errorf("%w: position %d of epoch %q of tenant %q is missing but the epoch has %d positions: a record was deleted; restore the database from a backup", tape.ErrCorrupt, pos, c.epoch, t.Tenant(), n)
		}
		return tape.Response{}, &tape.EndError{Tenant: t.Tenant(), Epoch: c.epoch, Cursor: c.name, Position: pos}
	}
	if err != nil {
		return tape.Response{}, err
	}
	if !hmac.Equal(storedTag, tag) {
		recorded, err := t.codec.OpenRequestHash(c.epoch, pos, storedTag, req)
		if err != nil {
			return tape.Response{}, err
		}
		if recorded == h {
			return tape.Response{}, t.codec.Tampered(c.epoch, pos, "request tag")
		}
		return tape.Response{}, &tape.MissError{Tenant: t.Tenant(), Epoch: c.epoch, Cursor: c.name, Position: pos, Recorded: recorded, Got: h, RequestID: requestID}
	}
	return t.codec.OpenResponse(c.epoch, pos, storedTag, resp)
}
