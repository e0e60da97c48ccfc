// Package tape is agent-rewind's durable ordered tape: an encrypted SQLite recording of LLM HTTP
// traffic that can be replayed exactly, in order, across process restarts. It is a library that
// any proxy can embed; it imports no other agent-rewind module and never calls upstream itself.
//
// # Model
//
// A tape belongs to one tenant and lives in its own database. A tenant's calls are grouped in
// epochs (a trial, a session): within an epoch every recorded call gets the next position, 0, 1,
// 2, ..., with no gap. Every eligible call is a distinct occurrence: two identical requests are
// two positions. A [Recorder] appends to one epoch; one recorder per tenant and epoch may exist
// at a time, across processes (a file lock), and [Recorder.Record] returns only once the call is
// committed and synced.
//
// A [Cursor] is a named reader of one epoch ("review-1"): [Cursor.Next] serves the response
// recorded at the cursor's position and advances it. The request it is given must have the same
// canonical hash ([RequestHash]) as the recorded one, or Next fails with a [*MissError] that
// names the cursor, the position and both hashes (never bodies) and the cursor does not move.
// Past the end it fails with an [*EndError]. The position is stored, so a cursor resumes where
// it stopped after a restart, and many cursors can replay one epoch independently.
//
// Each logical call may carry a request id. A cursor remembers which position served each id:
// a retry with the same id returns the same response and consumes no position. Serving,
// advancing and remembering the id are one SQLite transaction, so a crash between reading a
// response and advancing the cursor leaves neither done: the retry is served afresh, and a
// client never sees a skipped position.
//
// # Eligibility, queueing, timeouts
//
// Options.MaxBody (512 KiB) bounds each request body and each response body: a larger call is
// not eligible and Record refuses it with ErrTooLarge (the proxy passes it through unrecorded
// and says so). A Tape's operations take turns through a [Queue]; at most Options.MaxQueue (64)
// wait, the next gets ErrQueueFull (a proxy answers 503 with Retry-After). A proxy that
// serialises whole exchanges (upstream call, then commit) makes its own [NewQueue] with the same
// limit. Options.UpstreamTimeout (120 s) is carried for the proxy: [Tape.UpstreamContext] puts
// that absolute deadline on an upstream call.
//
// # Errors
//
// Every error matches an exported sentinel with errors.Is: ErrKeyMissing, ErrKeyMalformed,
// ErrWrongKey and ErrCorrupt for the key and the store (four distinct cases; the tape never
// falls back to memory), ErrTampered for one record or cursor row that fails authentication,
// ErrNewerFormat, ErrConflict (a second recorder or cursor handle, or a database locked past
// the busy timeout), ErrStorage (the file system failed), ErrQueueFull, ErrStrictMiss (a
// [*MissError]), ErrEndOfTape (an [*EndError]), ErrTooLarge, ErrInvalid, ErrClosed. A gateway
// answers ErrStrictMiss and ErrEndOfTape with 409 (the tape has no answer for this request);
// ErrConflict, ErrStorage and ErrQueueFull (with Retry-After) with 503; ErrTampered and
// ErrCorrupt with 503 too, as the store cannot be trusted; never with a paid upstream call.
//
// # Files
//
//	<storage dir>/<tenant>/tape.db         the SQLite database (WAL mode, synchronous=FULL)
//	<storage dir>/<tenant>/tape.db-wal     its write-ahead log, while open
//	<storage dir>/<tenant>/tape.db-shm     its WAL index, while open
//	<storage dir>/<tenant>/locks/<epoch>.record          flock held by the epoch's Recorder
//	<storage dir>/<tenant>/locks/<epoch>.cursor.<name>   flock held by the open Cursor
//
// Tenant, epoch and cursor names are 1 to 64 characters from [A-Za-z0-9_-], starting with a
// letter or digit ([ValidateName]); request ids are 1 to 128 characters from [A-Za-z0-9._:-]
// ([ValidateRequestID]). Directories are created with mode 0700 and fsynced into their parent;
// the database and its -wal, -shm and -journal files have mode 0600 (Open narrows wider ones an
// older version left).
// Lock files are empty; the kernel drops a flock when its holder exits, so a killed process
// leaves nothing locked.
//
// # Database (schema version 1)
//
// PRAGMA application_id is 0x52574e44 ("RWND"); PRAGMA user_version is the schema version, and a
// larger one than this code knows fails with ErrNewerFormat. Tables:
//
//	meta            (id = 1, tenant, key_id, key_check)
//	records         (epoch, position, request_tag, response, request), unique (epoch, position)
//	cursors         (epoch, name, position, mac), primary key (epoch, name)
//	cursor_requests (epoch, cursor, request_id, position, mac), primary key (epoch, cursor, request_id)
//
// Tenant, epoch, cursor names, positions and request ids are plaintext; bodies and headers are
// only ever stored sealed.
//
// # Keys
//
// The storage key K is 32 random bytes, given only as 64 hexadecimal characters in the
// environment variable REWIND_STORAGE_KEY ([KeyFromEnv]) or as Options.Key by an embedder; never
// as a command-line argument or a configuration field. Three subkeys are derived with
// HKDF-Expand-SHA256 (RFC 5869; K is uniformly random, so it is the pseudorandom key):
//
//	aead   = HKDF-Expand(K, "agent-rewind/tape aead v1", 32)     AES-256-GCM key
//	mac    = HKDF-Expand(K, "agent-rewind/tape mac v1", 32)      HMAC-SHA256 key
//	key_id = HKDF-Expand(K, "agent-rewind/tape key-id v1", 16)   stored in meta.key_id
//
// The key check: meta.key_check seals the known value "agent-rewind/tape key check v1" (kind 3,
// epoch "", position 0). On open, a key whose key_id differs and whose check does not open is
// ErrWrongKey; if only one of the two disagrees, the meta row is damaged: ErrCorrupt.
//
// # Sealed values
//
// Each sealed value is nonce (12 random bytes) | AES-256-GCM ciphertext | GCM tag (16 bytes).
// Its additional data binds where it belongs, so that a value moved to another position, epoch,
// tenant or kind, or two values swapped, fail to open (ErrTampered):
//
//	"agent-rewind/tape v1" 0x00 | str(tenant) | str(epoch) | u64(position) | u8(kind) | tag
//
// str(s) is a big-endian u32 length and the bytes of s; u64 is big-endian; kind is 1 for a
// request, 2 for a response, 3 for the key check, 4 for a replay-store value of tape/pgtape
// ([Codec.SealReplay]: epoch "", position 0, the replay key as the tag); tag is present only
// for a response (the record's 32-byte request_tag, which binds the response to the request it
// answered) and a replay-store value.
//
// The plaintexts, with headers = u32(n) | n × ( str(canonical name) | str(value) ):
//
//	request  (records.request):  hash[32] | str(method) | str(path) | headers | str(body)
//	response (records.response): u16(status) | headers | str(body)
//
// The request keeps only its answer headers (Options.AnswerHeaders; by default
// Anthropic-Version and Anthropic-Beta: never credentials) and its body byte for byte. The
// response drops [DroppedResponseHeaders] and keeps its body byte for byte; a server-sent event
// stream is the exact stream received.
//
// records.request_tag = HMAC-SHA256(mac, "request-tag" 0x00 | hash), where hash is the request's
// canonical hash ([RequestHash]): a replayed request is matched by its tag without decrypting
// anything, and a reader without the key cannot confirm a guess of a recorded request. A caller
// may have the hash cover a body of its own choosing (Request.MatchBody: the body without
// parts that do not change the answer) while the tape stores the body as sent. The
// cursor rows are authenticated too: cursors.mac = HMAC-SHA256(mac, "cursor" 0x00 | str(tenant)
// | str(epoch) | str(name) | u64(position)) and cursor_requests.mac = HMAC-SHA256(mac,
// "request-id" 0x00 | str(tenant) | str(epoch) | str(cursor) | str(request id) | u64(position)).
//
// What is not detected: deleting the last records of an epoch (truncation) or rolling the whole
// file back to an older copy. A missing position before the last one is reported as ErrCorrupt.
// The tape is not a hash chain; agent-rewind's hashchain module is.
//
// # Durability
//
// Record and Next each run as one immediate SQLite transaction in WAL mode with
// synchronous=FULL: the WAL is fsynced before the call returns, so a committed record survives
// a crash or power loss, and a crash mid-commit leaves no partial record (the WAL frames of an
// uncommitted transaction are ignored on recovery). Close checkpoints the WAL into tape.db.
package tape
