package tape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/ncruces/go-sqlite3"
)

// DatabaseName is the file name of a tenant's database inside Dir/<tenant>/.
const DatabaseName = "tape.db"

// LockDirName is the folder of lock files inside Dir/<tenant>/.
const LockDirName = "locks"

// Tape is one tenant's open store. Its methods are safe for concurrent use: they take turns
// through a Queue of Options.MaxQueue waiters, and each runs as one SQLite transaction.
type Tape struct {
	opts Options
	dir  string // Dir/<tenant>
	path string // Dir/<tenant>/tape.db
	seal *sealer
	q    *Queue

	// Fields below are used only by the holder of q's turn.
	conn  *sqlite3.Conn
	stmts map[string]*sqlite3.Stmt

	mu      sync.Mutex // guards closed and handles
	closed  bool
	handles map[*fileLock]struct{}
}

// Open opens (creating if needed) the tape of opts.Tenant under opts.Dir, in WAL mode with
// synchronous=FULL, and checks the key. Errors: ErrInvalid (options), ErrKeyMissing,
// ErrKeyMalformed, ErrWrongKey, ErrCorrupt, ErrNewerFormat, ErrConflict, ErrStorage. ctx bounds
// only the wait for a concurrent opener of the same database.
func Open(ctx context.Context, opts Options) (*Tape, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	key := opts.Key
	if key == nil {
		if key, err = KeyFromEnv(); err != nil {
			return nil, err
		}
	}
	k, err := deriveKeys(key)
	if err != nil {
		return nil, err
	}
	s, err := newSealer(k, opts.Tenant)
	if err != nil {
		return nil, err
	}
	opts.Key = nil // the derived keys are all the tape keeps

	t := &Tape{
		opts:    opts,
		dir:     filepath.Join(opts.Dir, opts.Tenant),
		seal:    s,
		q:       NewQueue(opts.MaxQueue),
		stmts:   map[string]*sqlite3.Stmt{},
		handles: map[*fileLock]struct{}{},
	}
	t.path = filepath.Join(t.dir, DatabaseName)
	if err := durable.MkdirAll(t.dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: create the tenant directory %s: %v: check the storage directory's permissions and free space", ErrStorage, t.dir, err)
	}
	// SQLite opens whatever is at the path: refuse a FIFO, device or symlink there first, so a
	// command fails at once naming it instead of blocking or reporting an obscure I/O error.
	if f, err := regular.Open(t.path); err == nil {
		f.Close()
	} else if errors.Is(err, regular.ErrNotRegular) {
		return nil, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	if err := privateFiles(t.path); err != nil {
		return nil, fmt.Errorf("%w: %v: check the storage directory's permissions", ErrStorage, err)
	}
	conn, err := sqlite3.OpenFlags(databaseURI(t.path), sqlite3.OPEN_READWRITE|sqlite3.OPEN_CREATE|sqlite3.OPEN_URI)
	if err != nil {
		return nil, t.sqlError("open", err)
	}
	t.conn = conn
	if err := t.init(ctx); err != nil {
		t.closeConn()
		return nil, err
	}
	// A last connection of another process that closed while this one opened may have removed
	// the -shm privateFiles made, and SQLite made it anew with the driver's mode.
	if err := narrowFiles(t.path); err != nil {
		t.closeConn()
		return nil, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	return t, nil
}

// init sets the connection up and creates or checks the schema and the key.
func (t *Tape) init(ctx context.Context) error {
	if err := t.conn.BusyTimeout(t.opts.BusyTimeout); err != nil {
		return t.sqlError("set busy timeout", err)
	}
	t.conn.SetInterrupt(ctx) // only while opening: a cancelled open gives up its busy wait
	defer t.conn.SetInterrupt(context.Background())

	// cell_size_check makes SQLite check b-tree cells as it reads them, so more damage is
	// reported as corruption instead of being read through; trusted_schema=OFF because nothing
	// in a tape's schema needs to run functions.
	for _, p := range []string{"PRAGMA cell_size_check = ON", "PRAGMA trusted_schema = OFF", "PRAGMA synchronous = FULL"} {
		if err := t.conn.Exec(p); err != nil {
			return t.sqlError("configure", err)
		}
	}
	var mode string
	err := t.query("PRAGMA journal_mode = WAL", nil, func(s *sqlite3.Stmt) error {
		mode = s.ColumnText(0)
		return nil
	})
	if err != nil {
		return t.sqlError("set WAL mode", err)
	}
	if mode != "wal" {
		return fmt.Errorf("%w: %s: SQLite could not switch to WAL mode (journal mode %q): put the storage directory on a local file system", ErrStorage, t.path, mode)
	}
	return t.inTx(func() error { return t.checkSchema() })
}

// checkSchema creates the schema in an empty database, or checks the format and the key of an
// existing one. It runs inside an immediate transaction, so two processes opening a new store at
// once create it once.
func (t *Tape) checkSchema() error {
	var version, appID, tables int64
	for _, q := range []struct {
		sql string
		dst *int64
	}{{"PRAGMA user_version", &version}, {"PRAGMA application_id", &appID}, {"SELECT count(*) FROM sqlite_schema", &tables}} {
		if err := t.query(q.sql, nil, func(s *sqlite3.Stmt) error { *q.dst = s.ColumnInt64(0); return nil }); err != nil {
			return t.sqlError("read the schema", err)
		}
	}
	switch {
	case version == 0 && appID == 0 && tables == 0:
		return t.createSchema()
	case appID != applicationID:
		return fmt.Errorf("%w: %s is an SQLite database but not a tape (application_id %#x, want %#x): move it away, or point the storage directory elsewhere", ErrCorrupt, t.path, appID, applicationID)
	case version > schemaVersion:
		return fmt.Errorf("%w: %s has schema version %d; this program reads up to version %d: use a newer agent-rewind", ErrNewerFormat, t.path, version, schemaVersion)
	case version != schemaVersion:
		return fmt.Errorf("%w: %s has schema version %d, which no release wrote: restore the file from a backup, or move it away", ErrCorrupt, t.path, version)
	}
	return t.checkKey()
}

func (t *Tape) createSchema() error {
	err := t.conn.Exec(schemaV1 + fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d;", applicationID, schemaVersion))
	if err != nil {
		return t.sqlError("create the schema", err)
	}
	err = t.exec(`INSERT INTO meta (id, tenant, key_id, key_check) VALUES (1, ?, ?, ?)`,
		t.opts.Tenant, t.seal.keyID, t.seal.keyCheck())
	if err != nil {
		return t.sqlError("write the key check", err)
	}
	return nil
}

// checkKey tells a wrong key (the key id differs and the check value does not open) from a
// damaged meta row (one of the two disagrees with the other).
func (t *Tape) checkKey() error {
	var tenant string
	var keyID, check []byte
	found := false
	err := t.query(`SELECT tenant, key_id, key_check FROM meta WHERE id = 1`, nil, func(s *sqlite3.Stmt) error {
		found = true
		tenant = s.ColumnText(0)
		keyID = s.ColumnBlob(1, nil)
		check = s.ColumnBlob(2, nil)
		return nil
	})
	if err != nil {
		return t.sqlError("read the key check", err)
	}
	if !found {
		return fmt.Errorf("%w: %s has no key check row: restore the file from a backup, or move it away", ErrCorrupt, t.path)
	}
	if tenant != t.opts.Tenant {
		return fmt.Errorf("%w: %s was created for tenant %q, not %q: each tenant has its own directory; move the file back", ErrCorrupt, t.path, tenant, t.opts.Tenant)
	}
	idOK, checkOK := bytes.Equal(keyID, t.seal.keyID), t.seal.checkKey(check)
	switch {
	case idOK && checkOK:
		return nil
	case !idOK && !checkOK:
		return fmt.Errorf("%w: tenant %q's store %s was created with another key (key id %x, this key's id %x): set %s to the key it was created with; a lost key cannot be recovered (move the directory away to start a new tape)", ErrWrongKey, t.opts.Tenant, t.path, short(keyID), short(t.seal.keyID), KeyEnv)
	default:
		return fmt.Errorf("%w: %s: the key id and the key check disagree, so the key check row is damaged: restore the file from a backup", ErrCorrupt, t.path)
	}
}

func short(b []byte) []byte { return b[:min(len(b), 8)] }

// Options returns the options in force, defaults filled in, without the key.
func (t *Tape) Options() Options {
	o := t.opts
	o.AnswerHeaders = append([]string(nil), o.AnswerHeaders...)
	return o
}

// Path is the database file's path.
func (t *Tape) Path() string { return t.path }

// UpstreamContext returns a context that ends Options.UpstreamTimeout after now (or when parent
// ends): the absolute deadline an embedding proxy puts on one upstream call, so that stalled work
// is released.
func (t *Tape) UpstreamContext(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(parent, t.opts.UpstreamTimeout,
		fmt.Errorf("upstream call exceeded the %s deadline (tape Options.UpstreamTimeout)", t.opts.UpstreamTimeout))
}

// Close releases every Recorder and Cursor lock of this Tape and closes the database (which
// checkpoints the WAL into the database file). It waits for the operation in progress.
func (t *Tape) Close() error {
	t.q.turn <- struct{}{} // wait for the running operation, whatever the queue length
	defer func() { <-t.q.turn }()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	for l := range t.handles {
		l.unlock()
	}
	clear(t.handles)
	t.mu.Unlock()
	return t.closeConn()
}

func (t *Tape) closeConn() error {
	for _, s := range t.stmts {
		s.Close()
	}
	clear(t.stmts)
	if err := t.conn.Close(); err != nil {
		return t.sqlError("close", err)
	}
	return nil
}

// begin waits for the caller's turn and fails if the Tape is closed.
func (t *Tape) begin(ctx context.Context) (release func(), err error) {
	release, err = t.q.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		release()
		return nil, fmt.Errorf("%w: the tape of tenant %q was closed", ErrClosed, t.opts.Tenant)
	}
	return release, nil
}

// inTx runs fn in one immediate transaction (the write lock is taken at BEGIN, so a busy
// database is reported before any work), committing if fn succeeds.
func (t *Tape) inTx(fn func() error) (err error) {
	if err := t.conn.Exec("BEGIN IMMEDIATE"); err != nil {
		return t.sqlError("begin a transaction", err)
	}
	defer func() {
		if err == nil {
			if cerr := t.conn.Exec("COMMIT"); cerr != nil {
				err = t.sqlError("commit", cerr)
			}
		}
		if err != nil && !t.conn.GetAutocommit() {
			t.conn.Exec("ROLLBACK") // the error that matters is err; SQLite undoes the rest on the next open
		}
	}()
	return fn()
}

// stmt returns the prepared statement for sql, preparing it on first use.
func (t *Tape) stmt(sql string) (*sqlite3.Stmt, error) {
	if s, ok := t.stmts[sql]; ok {
		return s, nil
	}
	s, _, err := t.conn.Prepare(sql)
	if err != nil {
		return nil, err
	}
	t.stmts[sql] = s
	return s, nil
}

// bind binds args (string, []byte, int64, int) to s's parameters in order.
func bind(s *sqlite3.Stmt, args []any) error {
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case string:
			err = s.BindText(i+1, v)
		case []byte:
			err = s.BindBlob(i+1, v)
		case int64:
			err = s.BindInt64(i+1, v)
		case int:
			err = s.BindInt64(i+1, int64(v))
		default:
			panic(fmt.Sprintf("tape: bind %T", a)) // a programming error in this package
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// query runs sql with args and calls row for each result row; row's error stops the query.
func (t *Tape) query(sql string, args []any, row func(*sqlite3.Stmt) error) error {
	s, err := t.stmt(sql)
	if err != nil {
		return err
	}
	defer s.Reset()
	if err := bind(s, args); err != nil {
		return err
	}
	for s.Step() {
		if err := row(s); err != nil {
			return err
		}
	}
	return s.Err()
}

// exec runs a statement that returns no rows.
func (t *Tape) exec(sql string, args ...any) error {
	s, err := t.stmt(sql)
	if err != nil {
		return err
	}
	if err := bind(s, args); err != nil {
		s.Reset()
		return err
	}
	return s.Exec()
}

// sqlError turns an SQLite error into one of the package's sentinels, saying what to do.
// Errors that already carry a sentinel pass through.
func (t *Tape) sqlError(op string, err error) error {
	for _, s := range []error{ErrCorrupt, ErrTampered, ErrConflict, ErrStorage, ErrWrongKey, ErrNewerFormat, ErrStrictMiss, ErrEndOfTape, ErrClosed, ErrInvalid} {
		if errors.Is(err, s) {
			return err
		}
	}
	switch {
	case errors.Is(err, sqlite3.BUSY), errors.Is(err, sqlite3.LOCKED):
		return fmt.Errorf("%w: %s %s: the database stayed locked by another process for more than %s (%v): retry, or stop the other process", ErrConflict, op, t.path, t.opts.BusyTimeout, err)
	case errors.Is(err, sqlite3.CORRUPT), errors.Is(err, sqlite3.NOTADB), errors.Is(err, sqlite3.FORMAT):
		return fmt.Errorf("%w: %s %s: %v: restore the file from a backup, or move the tenant directory away to start a new tape", ErrCorrupt, op, t.path, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, sqlite3.INTERRUPT):
		return fmt.Errorf("%w: %s %s: interrupted: %v", ErrConflict, op, t.path, err)
	default:
		return fmt.Errorf("%w: %s %s: %v: check the storage directory's permissions and free space", ErrStorage, op, t.path, err)
	}
}

// track registers a Recorder's or Cursor's lock so that Close releases it.
func (t *Tape) track(l *fileLock) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("%w: the tape of tenant %q was closed", ErrClosed, t.opts.Tenant)
	}
	t.handles[l] = struct{}{}
	return nil
}

// untrack releases a lock taken with track.
func (t *Tape) untrack(l *fileLock) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.handles, l)
	return l.unlock()
}

func (t *Tape) isClosed(l *fileLock) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.handles[l]
	return !ok
}
