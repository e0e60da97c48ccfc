package pgtape

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/tape"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DatabaseURLEnv names the environment variable that holds the connection string.
const DatabaseURLEnv = "REWIND_DATABASE_URL"

// DeploymentKeyEnv names the environment variable that holds the deployment key: 64
// hexadecimal characters, from which every tenant's tape key is derived ([TenantKey]).
const DeploymentKeyEnv = "REWIND_DEPLOYMENT_KEY"

// Store is a PostgreSQL database shared by every replica of a gateway: the tapes, the replay
// store and the API keys of all tenants. Its methods are safe for concurrent use.
type Store struct {
	pool    *pgxpool.Pool
	name    string // the connection string without its password, for messages
	depKey  []byte
	keyErr  error // why there is no deployment key (migrations and API keys need none)
	options tape.Options
	tenants sync.Map // [32]byte SHA-256 of an API key Authenticate accepted → its tenant
}

// Options configure a Store.
type Options struct {
	// URL is the connection string (postgres://... or key=value pairs). Empty reads
	// REWIND_DATABASE_URL.
	URL string
	// DeploymentKey is 32 bytes; nil reads REWIND_DEPLOYMENT_KEY. Never a flag or a file field.
	DeploymentKey []byte
	// Tape holds MaxBody and AnswerHeaders for every tenant's tape (Dir and Tenant are ignored).
	Tape tape.Options
	// MaxConns bounds the pool (0: pgxpool's default, 4 or the number of CPUs).
	MaxConns int32
}

// Open connects to the database (lazily: a database that is down fails the first operation,
// not Open, so a replica can start and report itself not ready). It does not migrate.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.URL == "" {
		o.URL = os.Getenv(DatabaseURLEnv)
	}
	if o.URL == "" {
		return nil, fmt.Errorf("%w: no database: set %s to a PostgreSQL connection string (postgres://user@host:5432/db)", tape.ErrInvalid, DatabaseURLEnv)
	}
	key, keyErr := o.DeploymentKey, error(nil)
	if key == nil {
		key, keyErr = deploymentKeyFromEnv()
	} else if len(key) != tape.KeySize {
		return nil, fmt.Errorf("%w: the deployment key is %d bytes; it must be %d", tape.ErrKeyMalformed, len(key), tape.KeySize)
	}
	if keyErr != nil && !errors.Is(keyErr, tape.ErrKeyMissing) {
		return nil, keyErr // a malformed key is a mistake to report at once
	}
	name := Redact(o.URL)
	cfg, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: the connection string %s does not parse: %v", tape.ErrInvalid, name, redactErr(err, o.URL))
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	cfg.ShouldPing = shouldPing
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %v", tape.ErrStorage, name, redactErr(err, o.URL))
	}
	return &Store{pool: pool, name: name, depKey: append([]byte(nil), key...), keyErr: keyErr, options: o.Tape}, nil
}

func deploymentKeyFromEnv() ([]byte, error) {
	v, ok := os.LookupEnv(DeploymentKeyEnv)
	if !ok || v == "" {
		return nil, fmt.Errorf("%w: set %s to 64 hexadecimal characters (32 random bytes, e.g. from `openssl rand -hex 32`), the same on every replica; every tenant's key is derived from it", tape.ErrKeyMissing, DeploymentKeyEnv)
	}
	k, err := tape.ParseKey(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", DeploymentKeyEnv, err)
	}
	return k, nil
}

// CheckKey reports whether the Store has a deployment key: tapes and replays need one;
// migrations and API keys do not.
func (s *Store) CheckKey() error { return s.keyErr }

// Close closes every connection.
func (s *Store) Close() { s.pool.Close() }

// Name is the connection string without its password.
func (s *Store) Name() string { return s.name }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return s.dbError("ping", err)
	}
	return nil
}

// TenantKey derives a tenant's 32-byte tape key from the deployment key:
//
//	HKDF-Expand-SHA256(deployment key, "agent-rewind/pgtape tenant v1" 0x00 | tenant, 32)
//
// Each tenant's values are sealed under its own key (and the tape's AES-GCM additional data
// names the tenant too), so one tenant's key opens nothing of another's.
func TenantKey(deploymentKey []byte, tenant string) ([]byte, error) {
	return hkdf.Expand(sha256.New, deploymentKey, "agent-rewind/pgtape tenant v1\x00"+tenant, tape.KeySize)
}

var passwordKV = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// Redact returns the connection string with its password replaced by "xxxxx".
func Redact(conn string) string {
	if u, err := url.Parse(conn); err == nil && u.Scheme != "" {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return passwordKV.ReplaceAllString(conn, "${1}xxxxx")
}

// redactErr keeps a driver error from repeating the password.
func redactErr(err error, conn string) string {
	msg := err.Error()
	if u, perr := url.Parse(conn); perr == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = regexp.MustCompile(regexp.QuoteMeta(p)).ReplaceAllString(msg, "xxxxx")
		}
	}
	return passwordKV.ReplaceAllString(msg, "${1}xxxxx")
}

// dbError turns a driver error into one of the tape's sentinels, saying what to do. Errors
// that already carry a sentinel pass through.
func (s *Store) dbError(op string, err error) error {
	for _, e := range []error{tape.ErrCorrupt, tape.ErrTampered, tape.ErrConflict, tape.ErrStorage, tape.ErrWrongKey, tape.ErrNewerFormat, tape.ErrStrictMiss, tape.ErrEndOfTape, tape.ErrClosed, tape.ErrInvalid, tape.ErrTooLarge, ErrMigrationsPending} {
		if errors.Is(err, e) {
			return err
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001", pe.Code == "40P01", pe.Code == "55P03", pe.Code == "23505":
			return fmt.Errorf("%w: %s in %s: %s (%s): a concurrent writer won; retry", tape.ErrConflict, op, s.name, pe.Message, pe.Code)
		case pe.Code == "42P01":
			return fmt.Errorf("%w: %s in %s: %s: run `agent-rewind gateway migrate` once", ErrMigrationsPending, op, s.name, pe.Message)
		case pe.Code[:2] == "XX":
			return fmt.Errorf("%w: %s in %s: %s (%s): restore the database from a backup", tape.ErrCorrupt, op, s.name, pe.Message, pe.Code)
		}
		return fmt.Errorf("%w: %s in %s: %s (%s)", tape.ErrStorage, op, s.name, pe.Message, pe.Code)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s in %s: interrupted: %v", tape.ErrConflict, op, s.name, err)
	}
	return fmt.Errorf("%w: %s in %s: the database is unreachable or failed (%s): check that PostgreSQL is up; the call was not recorded", tape.ErrStorage, op, s.name, redactErr(err, ""))
}

// DerivedKey derives a 32-byte key for purpose from the deployment key, so that every replica
// computes the same one without storing it:
//
//	HKDF-Expand-SHA256(deployment key, "agent-rewind/pgtape derived v1" 0x00 | purpose, 32)
func (s *Store) DerivedKey(purpose string) []byte {
	k, _ := hkdf.Expand(sha256.New, s.depKey, "agent-rewind/pgtape derived v1\x00"+purpose, 32) // fails only for a length over 255×32
	return k
}
