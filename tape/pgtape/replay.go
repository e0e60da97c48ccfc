package pgtape

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agent-rewind/rewind/tape"
	"github.com/jackc/pgx/v5"
)

// Lookup returns the replay-store value recorded under key for this tenant, opened (found
// false: none). A value that does not open under the tenant's key is tape.ErrTampered: a wrong
// deployment key or a damaged or moved row fails visibly, never a silent miss that would pay
// for the call again.
func (t *Tape) Lookup(ctx context.Context, key []byte) (value []byte, found bool, err error) {
	var sealed []byte
	err = t.s.pool.QueryRow(ctx, `SELECT value FROM rewind_replay WHERE tenant = $1 AND key = $2`, t.Tenant(), key).Scan(&sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, t.s.dbError("read the replay store", err)
	}
	return t.open(key, sealed)
}

// LookupChecked is Store.Authenticate and Lookup in one statement, so one round trip: apiKey
// must be a live key of this tape's tenant (else ErrUnauthenticated), then the value recorded
// under key is returned as Lookup does.
func (t *Tape) LookupChecked(ctx context.Context, apiKey string, key []byte) (value []byte, found bool, err error) {
	sum, id, err := keyHash(apiKey)
	if err != nil {
		return nil, false, err
	}
	var tenant string
	var revoked *time.Time
	var sealed []byte
	err = t.s.pool.QueryRow(ctx, `SELECT k.tenant, k.revoked_at, r.value FROM rewind_api_keys k
		LEFT JOIN rewind_replay r ON r.tenant = k.tenant AND r.key = $2 WHERE k.hash = $1`, sum[:], key).Scan(&tenant, &revoked, &sealed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, refused(id, "", nil)
	case err != nil:
		return nil, false, t.s.dbError("check an API key and read the replay store", err)
	case revoked != nil:
		return nil, false, refused(id, tenant, revoked)
	case tenant != t.Tenant():
		return nil, false, fmt.Errorf("%w: key %s belongs to tenant %q, not %q", ErrUnauthenticated, id, tenant, t.Tenant())
	case sealed == nil:
		return nil, false, nil
	}
	return t.open(key, sealed)
}

// open opens a sealed replay-store value.
func (t *Tape) open(key, sealed []byte) ([]byte, bool, error) {
	plain, ok := t.codec.OpenReplay(key, sealed)
	if !ok {
		return nil, false, fmt.Errorf("%w: the replay-store value %x of tenant %q in %s does not authenticate: it was altered or moved, or %s changed; delete the row or restore the database", tape.ErrTampered, key[:min(len(key), 8)], t.Tenant(), t.s.name, DeploymentKeyEnv)
	}
	return plain, true, nil
}

// Store seals value under the tenant's key and records it under key. The first value recorded
// under a key is kept (replays are exact: a later identical call changes nothing).
//
// The replay store is a cache of answers already served, not the tape: its commit does not
// wait for the disk (synchronous_commit off for this one transaction, sent with the insert in
// one round trip), so a database crash may forget the last fraction of a second of replays (the
// next identical call pays again); it never leaves a partial row.
func (t *Tape) Store(ctx context.Context, key, value []byte) error {
	var b pgx.Batch
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit TO off`)
	b.Queue(`INSERT INTO rewind_replay (tenant, key, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		t.Tenant(), key, t.codec.SealReplay(key, value))
	b.Queue(`COMMIT`) // after a failure the connection is left in a failed transaction, and the pool drops it
	err := t.s.pool.SendBatch(ctx, &b).Close()
	if err != nil {
		return t.s.dbError("write the replay store", err)
	}
	return nil
}
