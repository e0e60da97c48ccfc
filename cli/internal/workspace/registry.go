package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/trust"
	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
)

// The state base (StateBase) holds every store and the registry that finds them:
//
//	stores/<id>/       one workspace's store: the layout in doc.go, and store.json (Record)
//	identities/<key>   the id of the store of the folder with that Identity, one line
//	anchors/<id>/head  the chain's anchor (hashchain/FORMAT.md §7), beside the store, not in it
//	lock               flock(2), held while a store is created, migrated or adopted
//	.gitignore         "*": nothing here is ever committed, should the base sit in a repository
//
// Finding a workspace's store is one statx(2) of its folder and two small reads: no scan.
const (
	storesDir     = "stores"
	identitiesDir = "identities"
	anchorsDir    = "anchors"
	// RecordFile is the store's description in its own folder (Record).
	RecordFile = "store.json"
)

// RecordVersion is the store.json format this program writes.
const RecordVersion = 1

// Record describes one store: which workspace folder it belongs to.
type Record struct {
	Version      int       `json:"version"`
	ID           string    `json:"id"`   // 16 hex digits, random, never reused
	Root         string    `json:"root"` // the folder's path when last opened; updated after a move
	Identity     Identity  `json:"identity"`
	Created      time.Time `json:"created"`
	MigratedFrom string    `json:"migratedFrom,omitempty"` // the .rewind/ folder it was moved out of
	AdoptedFrom  *Identity `json:"adoptedFrom,omitempty"`  // the folder it belonged to before "store --adopt"
	// Offered is the store whose history the command that made this one offered to continue
	// here ("store --adopt" it): an earlier folder's at the same path, or the original's of a
	// copy. Adopting it replaces this store, which is then an orphan (nothing is removed).
	Offered string `json:"offered,omitempty"`
	// ForkedFrom is the store whose history this one began as a copy of ("store --adopt" in a
	// copy of a workspace whose original still exists).
	ForkedFrom string `json:"forkedFrom,omitempty"`
}

// registry is the state base, read and written by this package only.
type registry struct{ base string }

func (r registry) storeDir(id string) string  { return filepath.Join(r.base, storesDir, id) }
func (r registry) anchor(id string) string    { return filepath.Join(r.base, anchorsDir, id, "head") }
func (r registry) keyFile(id Identity) string { return filepath.Join(r.base, identitiesDir, id.key()) }

// find returns the record of the store that belongs to the folder with identity id; ok is false
// when there is none (or its identity entry points at a store that is not there).
func (r registry) find(id Identity) (rec Record, ok bool, err error) {
	// Through regular, which on Windows shares deletion: a writer's rename over the entry
	// (bind) is not refused, nor is this read while the rename runs (a sharing violation).
	b, err := regular.ReadFile(r.keyFile(id))
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("read the store registry: %w", err)
	}
	sid := strings.TrimSpace(string(b))
	if !validID(sid) {
		return Record{}, false, fmt.Errorf("%s holds %q, not a store id: the registry is damaged; remove that file and adopt the store again (agent-rewind store --adopt ID)", r.keyFile(id), sid)
	}
	rec, err = r.record(sid)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil // a migration or creation killed before its store was in place
	}
	if err != nil {
		return Record{}, false, err
	}
	// An entry left behind for another folder (an adoption killed midway) finds nothing.
	return rec, rec.Identity.same(id), nil
}

// record reads stores/<id>/store.json.
func (r registry) record(id string) (Record, error) {
	name := filepath.Join(r.storeDir(id), RecordFile)
	b, err := regular.ReadFile(name) // sharing deletion on Windows, as find

	if err != nil {
		return Record{}, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil || rec.ID != id {
		return Record{}, fmt.Errorf("%s is damaged (%v): restore it from a backup, or write {\"version\": 1, \"id\": %q, ...} as documented in docs/store.md", name, err, id)
	}
	if rec.Version > RecordVersion {
		return Record{}, fmt.Errorf("%s is format %d, newer than this agent-rewind understands (%d): upgrade agent-rewind", name, rec.Version, RecordVersion)
	}
	return rec, nil
}

// writeRecord writes rec into the folder dir (the store, or a store not yet in place).
func writeRecord(dir string, rec Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(filepath.Join(dir, RecordFile), append(b, '\n'), 0o600)
}

// bind points the folder's identity at the store id.
func (r registry) bind(id Identity, sid string) error {
	if err := os.MkdirAll(filepath.Join(r.base, identitiesDir), 0o700); err != nil {
		return fmt.Errorf("create the store registry: %w", err)
	}
	return durable.WriteFile(r.keyFile(id), []byte(sid+"\n"), 0o600)
}

// all returns every store's record, and the ids whose record cannot be read.
func (r registry) all() ([]Record, map[string]error, error) {
	ents, err := os.ReadDir(filepath.Join(r.base, storesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var recs []Record
	bad := map[string]error{}
	for _, e := range ents {
		if !e.IsDir() || !validID(e.Name()) {
			continue
		}
		rec, err := r.record(e.Name())
		if err != nil {
			bad[e.Name()] = err
			continue
		}
		recs = append(recs, rec)
	}
	return recs, bad, nil
}

// prepare creates the base with its .gitignore and stores/ folder, and checks the base again
// now that it exists: another user could have made it between At's check and MkdirAll.
func (r registry) prepare() error {
	if err := os.MkdirAll(filepath.Join(r.base, storesDir), 0o700); err != nil {
		return fmt.Errorf("create the state folder %s: %w (choose another with --state-dir or %s)", r.base, err, StateDirEnv)
	}
	if err := checkBase(r.base, true); err != nil {
		return err
	}
	if err := trust.Within(r.base, filepath.Join(r.base, storesDir)); err != nil {
		return fmt.Errorf("agent-rewind's state folder is not safe to use: %w", err)
	}
	return ignoreAll(r.base)
}

// lock takes the registry's lock (creating, migrating and adopting stores are serialised
// across processes); the returned function releases it.
func (r registry) lock() (func(), error) {
	if err := r.prepare(); err != nil {
		return nil, err
	}
	return lockFile(filepath.Join(r.base, "lock"))
}

// ignoreAll makes git ignore the folder dir and everything in it, as Python's virtual
// environments do: a .gitignore holding "*" (itself included). A store or state base that
// ends up inside a repository is then never staged by "git add -A".
func ignoreAll(dir string) error {
	name := filepath.Join(dir, ".gitignore")
	if b, err := os.ReadFile(name); err == nil && string(b) == gitignore {
		return nil
	}
	return durable.WriteFile(name, []byte(gitignore), 0o600)
}

const gitignore = "# agent-rewind's state: never commit it (it holds copies of ignored files such as .env)\n*\n"

// newID returns a fresh random store id.
func newID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// validID reports whether s is a store id: 16 lowercase hex digits.
func validID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
