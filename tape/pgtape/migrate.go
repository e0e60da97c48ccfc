package pgtape

import (
	"context"
	"errors"
	"fmt"

	"github.com/agent-rewind/rewind/tape"
	"github.com/jackc/pgx/v5"
)

// migration is one schema version: applied once, in order, inside one transaction.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations are the schema versions, in order. A released migration is never edited: a change
// is a new version. SchemaVersion is the last one.
var migrations = []migration{
	{1, "tape, replay store", `
CREATE TABLE rewind_tenants (
	tenant    text  PRIMARY KEY,
	key_id    bytea NOT NULL,
	key_check bytea NOT NULL
);
CREATE TABLE rewind_epochs (
	tenant text   NOT NULL,
	epoch  text   NOT NULL,
	next   bigint NOT NULL CHECK (next >= 0),
	PRIMARY KEY (tenant, epoch)
);
CREATE TABLE rewind_records (
	tenant      text   NOT NULL,
	epoch       text   NOT NULL,
	position    bigint NOT NULL CHECK (position >= 0),
	request_tag bytea  NOT NULL,
	response    bytea  NOT NULL,
	request     bytea  NOT NULL,
	PRIMARY KEY (tenant, epoch, position)
);
CREATE TABLE rewind_cursors (
	tenant   text   NOT NULL,
	epoch    text   NOT NULL,
	name     text   NOT NULL,
	position bigint NOT NULL CHECK (position >= 0),
	mac      bytea  NOT NULL,
	PRIMARY KEY (tenant, epoch, name)
);
CREATE TABLE rewind_cursor_requests (
	tenant     text   NOT NULL,
	epoch      text   NOT NULL,
	cursor     text   NOT NULL,
	request_id text   NOT NULL,
	position   bigint NOT NULL CHECK (position >= 0),
	mac        bytea  NOT NULL,
	PRIMARY KEY (tenant, epoch, cursor, request_id)
);
CREATE TABLE rewind_replay (
	tenant     text        NOT NULL,
	key        bytea       NOT NULL,
	value      bytea       NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (tenant, key)
);
`},
	{2, "API keys", `
CREATE TABLE rewind_api_keys (
	id         text        PRIMARY KEY,
	tenant     text        NOT NULL,
	hash       bytea       NOT NULL UNIQUE,
	created_at timestamptz NOT NULL DEFAULT now(),
	revoked_at timestamptz
);
CREATE INDEX rewind_api_keys_tenant ON rewind_api_keys (tenant);
`},
	{3, "fleet savings receipt", `
CREATE TABLE rewind_savings (
	id         integer     PRIMARY KEY CHECK (id = 1),
	receipt    bytea       NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now()
);
`},
}

// SchemaVersion is the schema version this code reads and writes.
var SchemaVersion = migrations[len(migrations)-1].version

// ErrMigrationsPending: the database's schema is older than this code. Replicas never migrate
// on their own; run `agent-rewind gateway migrate` (or [Store.Migrate]) once per release.
var ErrMigrationsPending = errors.New("pgtape: schema migrations pending")

// migrationLock is the advisory lock key that serialises migrators ("RWND" "MIGR").
const migrationLock int64 = 0x52574e444d494752

// Migrate applies every migration the database lacks, each in its own transaction, holding an
// advisory lock so that two migrators take turns. It returns the versions it applied (none
// when the schema is current: migrating twice is a no-op). A database migrated by a newer
// release fails with tape.ErrNewerFormat.
func (s *Store) Migrate(ctx context.Context) (applied []int, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, s.dbError("connect to migrate", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return nil, s.dbError("take the migration lock", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS rewind_schema_migrations (
		version    integer     PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, s.dbError("create the migrations table", err)
	}
	current, err := schemaVersion(ctx, conn.Conn())
	if err != nil {
		return nil, s.dbError("read the schema version", err)
	}
	if current > SchemaVersion {
		return nil, s.newerFormat(current)
	}
	for _, m := range migrations {
		if m.version <= current {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO rewind_schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return applied, s.dbError(fmt.Sprintf("apply migration %d (%s)", m.version, m.name), err)
		}
		applied = append(applied, m.version)
	}
	return applied, nil
}

// CheckSchema reports whether the schema is the one this code expects: nil, ErrMigrationsPending
// or tape.ErrNewerFormat. It changes nothing: replicas check, `gateway migrate` migrates.
func (s *Store) CheckSchema(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.dbError("connect", err)
	}
	defer conn.Release()
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('rewind_schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return s.dbError("read the schema version", err)
	}
	current := 0
	if exists {
		if current, err = schemaVersion(ctx, conn.Conn()); err != nil {
			return s.dbError("read the schema version", err)
		}
	}
	switch {
	case current > SchemaVersion:
		return s.newerFormat(current)
	case current < SchemaVersion:
		return fmt.Errorf("%w: the database %s has schema version %d; this program needs version %d: run `agent-rewind gateway migrate` once (replicas never migrate on their own)", ErrMigrationsPending, s.name, current, SchemaVersion)
	}
	return nil
}

func schemaVersion(ctx context.Context, conn *pgx.Conn) (int, error) {
	var v int
	err := conn.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM rewind_schema_migrations`).Scan(&v)
	return v, err
}

func (s *Store) newerFormat(v int) error {
	return fmt.Errorf("%w: the database %s has schema version %d; this program knows up to version %d: use a newer agent-rewind", tape.ErrNewerFormat, s.name, v, SchemaVersion)
}
