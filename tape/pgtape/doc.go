// Package pgtape keeps agent-rewind's tape, its exact-replay store and a team gateway's API
// keys in PostgreSQL, shared by every replica of a gateway. It is a module of its own so that
// only those who want PostgreSQL download pgx: embedding the tape module with SQLite alone
// does not.
//
// # Model
//
// A [Store] is one database. [Store.Tape] opens one tenant's tape in it: the same records,
// cursors, request-id retries, strict misses and error sentinels as the SQLite tape (package
// tape), sealed by the same [tape.Codec], so a record means the same thing in either store.
// What differs is concurrency: any number of recorders and cursors over one epoch may run at
// once, in any replica. A recorder's position comes from a row lock on the epoch's counter
// (rewind_epochs), taken in the transaction that inserts the record, so concurrent recorders
// get consecutive positions with no gap and no duplicate; a cursor's turn comes from a row lock
// on the cursor (SELECT ... FOR UPDATE), so concurrent Next calls through several replicas
// serve each position once, in order. [Tape.Lookup] and [Tape.Store] are the exact-replay
// store: a value under a 32-byte key, the first one recorded kept.
//
// # Migrations
//
// The schema is versioned: rewind_schema_migrations lists the versions applied. [Store.Migrate]
// (`agent-rewind gateway migrate`) applies the missing ones, each in its own transaction, under
// an advisory lock, and applying them twice is a no-op. A replica only checks
// ([Store.CheckSchema]): a missing version is [ErrMigrationsPending], a newer one
// tape.ErrNewerFormat; it never migrates on its own. A released migration is never edited.
//
//	version 1  rewind_tenants, rewind_epochs, rewind_records, rewind_cursors,
//	           rewind_cursor_requests, rewind_replay
//	version 2  rewind_api_keys
//	version 3  rewind_savings
//
// # Tables (schema version 3)
//
//	rewind_tenants         (tenant, key_id, key_check)                      primary key tenant
//	rewind_epochs          (tenant, epoch, next)                            the next position
//	rewind_records         (tenant, epoch, position, request_tag, response, request)
//	rewind_cursors         (tenant, epoch, name, position, mac)
//	rewind_cursor_requests (tenant, epoch, cursor, request_id, position, mac)
//	rewind_replay          (tenant, key, value, created_at)
//	rewind_api_keys        (id, tenant, hash, created_at, revoked_at)
//	rewind_savings         (id = 1, receipt, updated_at)                    the fleet's receipt
//
// The columns mean what the SQLite tape's do (see package tape: key_check, request_tag, the
// sealed request and response, the cursor and request-id MACs). rewind_replay.value is sealed
// with kind 4 ([tape.Codec.SealReplay]): its additional data names the tenant and the key, so a
// value moved to another key or tenant fails to open (tape.ErrTampered), never a silent miss.
// rewind_savings.receipt is the whole fleet's savings receipt, a JSON document the gateway
// owns, in the clear (token counts and prices, no prompt); [Store.UpdateSavings] changes it
// under the row's lock, so replicas adding at once never lose each other's counts.
// Tenant, epoch, cursor names, positions, request ids and replay keys (hashes) are plaintext;
// prompts and responses never reach the database in the clear.
//
// # Keys
//
// One deployment key D (32 random bytes, 64 hexadecimal characters in REWIND_DEPLOYMENT_KEY, the
// same on every replica; never a flag or a file field) gives each tenant its own tape key:
//
//	K(tenant) = HKDF-Expand-SHA256(D, "agent-rewind/pgtape tenant v1" 0x00 | tenant, 32)
//
// from which the tape derives its AES-256-GCM, HMAC and key-id keys as usual. A wrong D is
// tape.ErrWrongKey when a tenant's tape opens (its key check does not open). Keys that replicas
// must share without storing ([Store.DerivedKey]) are HKDF-Expand-SHA256(D, "agent-rewind/pgtape
// derived v1" 0x00 | purpose, 32).
//
// An API key is "rwk_" | id (16 hexadecimal) | "_" | secret (64 hexadecimal, 32 random bytes).
// rewind_api_keys.hash is SHA-256 of the whole key; the key is shown once, by
// [Store.CreateKey]. [Store.Authenticate] checks a key against the database every time, so a
// key revoked through one replica is refused by all from their next request; so does
// [Tape.LookupChecked], the check and a replay lookup in one statement. Only a key's tenant,
// which never changes, is remembered ([Store.KnownTenant]).
//
// # Errors and durability
//
// Errors match the tape's sentinels: a database that does not answer is tape.ErrStorage (a
// gateway answers 503 with Retry-After), a lost race tape.ErrConflict, a damaged row
// tape.ErrTampered or tape.ErrCorrupt. Messages name the database without its password
// ([Redact]). A record is one transaction in two round trips, committed before Record returns
// (PostgreSQL's synchronous_commit, on by default, makes the commit durable): a process killed
// mid-call leaves no partial record and no gap.
package pgtape
