package pgtape

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/tape"
	"github.com/jackc/pgx/v5"
)

// APIKeyPrefix starts every gateway API key: "rwk_" | id (16 hex) | "_" | secret (64 hex).
const APIKeyPrefix = "rwk_"

// ErrUnauthenticated: an API key that is malformed, unknown or revoked.
var ErrUnauthenticated = errors.New("pgtape: API key refused")

// APIKey describes a key; the secret is never stored (only SHA-256 of the whole key) and is
// returned once, by CreateKey.
type APIKey struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// CreateKey makes a new API key for tenant and returns it with the whole key, which is shown
// once: only its SHA-256 is stored.
func (s *Store) CreateKey(ctx context.Context, tenant string) (APIKey, string, error) {
	if err := tape.ValidateName("tenant", tenant); err != nil {
		return APIKey{}, "", err
	}
	var id [8]byte
	var secret [32]byte
	rand.Read(id[:])
	rand.Read(secret[:])
	k := APIKey{ID: hex.EncodeToString(id[:]), Tenant: tenant}
	whole := APIKeyPrefix + k.ID + "_" + hex.EncodeToString(secret[:])
	sum := sha256.Sum256([]byte(whole))
	err := s.pool.QueryRow(ctx, `INSERT INTO rewind_api_keys (id, tenant, hash) VALUES ($1, $2, $3) RETURNING created_at`,
		k.ID, tenant, sum[:]).Scan(&k.CreatedAt)
	if err != nil {
		return APIKey{}, "", s.dbError("create an API key", err)
	}
	return k, whole, nil
}

// ListKeys lists tenant's keys, oldest first, revoked ones included.
func (s *Store) ListKeys(ctx context.Context, tenant string) ([]APIKey, error) {
	if err := tape.ValidateName("tenant", tenant); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, tenant, created_at, revoked_at FROM rewind_api_keys WHERE tenant = $1 ORDER BY created_at, id`, tenant)
	if err != nil {
		return nil, s.dbError("list API keys", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIKey, error) {
		var k APIKey
		err := r.Scan(&k.ID, &k.Tenant, &k.CreatedAt, &k.RevokedAt)
		return k, err
	})
	if err != nil {
		return nil, s.dbError("list API keys", err)
	}
	return keys, nil
}

// RevokeKey revokes tenant's key id. Every replica refuses it from the next request on: whether
// a key is live is checked in the database on every request, never cached (only its tenant is,
// which never changes).
func (s *Store) RevokeKey(ctx context.Context, tenant, id string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE rewind_api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE tenant = $1 AND id = $2`, tenant, id)
	if err != nil {
		return s.dbError("revoke an API key", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: tenant %q has no API key %q: list them with `agent-rewind gateway keys list --tenant %s`", tape.ErrInvalid, tenant, id, tenant)
	}
	return nil
}

// Authenticate returns the tenant of a live key. A malformed, unknown or revoked key is
// ErrUnauthenticated (the message never repeats the key's secret). It also remembers the key's
// tenant for KnownTenant.
func (s *Store) Authenticate(ctx context.Context, key string) (tenant string, err error) {
	sum, id, err := keyHash(key)
	if err != nil {
		return "", err
	}
	var revoked *time.Time
	err = s.pool.QueryRow(ctx, `SELECT tenant, revoked_at FROM rewind_api_keys WHERE hash = $1`, sum[:]).Scan(&tenant, &revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", refused(id, "", nil)
	}
	if err != nil {
		return "", s.dbError("check an API key", err)
	}
	if revoked != nil {
		return "", refused(id, tenant, revoked)
	}
	if _, ok := s.tenants.Load(sum); !ok {
		s.tenants.Store(sum, tenant)
	}
	return tenant, nil
}

// KnownTenant returns the tenant of a key that Authenticate accepted before in this process,
// without asking the database. A key's tenant never changes, so it is safe to remember; whether
// the key is still live is not: check that with Authenticate, or with Tape.LookupChecked, which
// checks it in the statement that reads the replay.
func (s *Store) KnownTenant(key string) (string, bool) {
	sum, _, err := keyHash(key)
	if err != nil {
		return "", false
	}
	v, ok := s.tenants.Load(sum)
	if !ok {
		return "", false
	}
	return v.(string), true
}

// keyHash checks a key's form and returns its SHA-256 (what is stored) and its id.
func keyHash(key string) (sum [32]byte, id string, err error) {
	rest, ok := strings.CutPrefix(key, APIKeyPrefix)
	if !ok || len(rest) != 16+1+64 || rest[16] != '_' {
		return sum, "", fmt.Errorf("%w: the key is not an agent-rewind gateway key (%s followed by 81 characters): create one with `agent-rewind gateway keys create --tenant T`", ErrUnauthenticated, APIKeyPrefix)
	}
	return sha256.Sum256([]byte(key)), rest[:16], nil
}

// refused is the error for an unknown key (revoked nil) or a revoked one.
func refused(id, tenant string, revoked *time.Time) error {
	if revoked == nil {
		return fmt.Errorf("%w: key %s is unknown", ErrUnauthenticated, id)
	}
	return fmt.Errorf("%w: key %s of tenant %q was revoked at %s", ErrUnauthenticated, id, tenant, revoked.UTC().Format(time.RFC3339))
}
