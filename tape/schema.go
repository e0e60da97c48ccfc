package tape

// schemaVersion is stored in PRAGMA user_version. A database with a larger version was written
// by newer code and is refused with ErrNewerFormat rather than misread.
const schemaVersion = 1

// applicationID is stored in PRAGMA application_id ("RWND"), so that file(1) and this package can
// tell a tape database from any other SQLite file.
const applicationID = 0x52574e44

// schemaV1 creates the version 1 schema. Column order in records is deliberate: SQLite reads a
// row's columns in order through its overflow pages, so the response (read on every replay)
// comes before the request (read only on a miss or a verify).
const schemaV1 = `
CREATE TABLE meta (
	id        INTEGER PRIMARY KEY CHECK (id = 1),
	tenant    TEXT NOT NULL,
	key_id    BLOB NOT NULL,
	key_check BLOB NOT NULL
);
CREATE TABLE records (
	id          INTEGER PRIMARY KEY,
	epoch       TEXT    NOT NULL,
	position    INTEGER NOT NULL CHECK (position >= 0),
	request_tag BLOB    NOT NULL,
	response    BLOB    NOT NULL,
	request     BLOB    NOT NULL,
	UNIQUE (epoch, position)
);
CREATE TABLE cursors (
	epoch    TEXT    NOT NULL,
	name     TEXT    NOT NULL,
	position INTEGER NOT NULL CHECK (position >= 0),
	mac      BLOB    NOT NULL,
	PRIMARY KEY (epoch, name)
) WITHOUT ROWID;
CREATE TABLE cursor_requests (
	epoch      TEXT    NOT NULL,
	cursor     TEXT    NOT NULL,
	request_id TEXT    NOT NULL,
	position   INTEGER NOT NULL CHECK (position >= 0),
	mac        BLOB    NOT NULL,
	PRIMARY KEY (epoch, cursor, request_id)
) WITHOUT ROWID;
`

// SQL statements, prepared once per Tape.
const (
	sqlNextPosition = `SELECT COALESCE(MAX(position) + 1, 0) FROM records WHERE epoch = ?`
	sqlInsertRecord = `INSERT INTO records (epoch, position, request_tag, response, request) VALUES (?, ?, ?, ?, ?)`
	sqlResponse     = `SELECT request_tag, response FROM records WHERE epoch = ? AND position = ?`
	sqlRecord       = `SELECT request_tag, response, request FROM records WHERE epoch = ? AND position = ?`
	sqlCursor       = `SELECT position, mac FROM cursors WHERE epoch = ? AND name = ?`
	sqlSetCursor    = `INSERT INTO cursors (epoch, name, position, mac) VALUES (?, ?, ?, ?)
		ON CONFLICT (epoch, name) DO UPDATE SET position = excluded.position, mac = excluded.mac`
	sqlRequestID    = `SELECT position, mac FROM cursor_requests WHERE epoch = ? AND cursor = ? AND request_id = ?`
	sqlSetRequestID = `INSERT INTO cursor_requests (epoch, cursor, request_id, position, mac) VALUES (?, ?, ?, ?, ?)`
)
