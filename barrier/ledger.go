package barrier

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/internal/regular"
)

// Ledger is the effect ledger in one state directory (the CLI uses effects/ in the store). It is safe
// for use by many processes at once; a *Ledger value itself is not safe for concurrent use by
// several goroutines without their own locking (each guard process uses one).
//
// Opening a Ledger does no I/O: the directory is created on the first admission, and lookups in
// a directory that does not exist find nothing.
type Ledger struct {
	dir string
	rec Recorder

	// Now returns the current time; tests replace it. Times are stored in UTC.
	Now func() time.Time
}

// Open returns the ledger in dir, recording through rec. rec must not be nil: every admission,
// transition and refusal is recorded.
func Open(dir string, rec Recorder) (*Ledger, error) {
	if dir == "" {
		return nil, errors.New("barrier: Open needs the ledger directory (the CLI passes effects/ in the workspace's store)")
	}
	if rec == nil {
		return nil, fmt.Errorf("barrier: %w: pass an adapter over the chain (for tests, a file-backed Recorder)", ErrNoRecorder)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("barrier: ledger directory %q: %w", dir, err)
	}
	return &Ledger{dir: abs, rec: rec, Now: time.Now}, nil
}

// Dir returns the ledger's directory.
func (l *Ledger) Dir() string { return l.dir }

func (l *Ledger) now() time.Time { return l.Now().UTC().Round(0) }

// Layout of the ledger directory.
const (
	keysDir    = "keys"    // one record per key: keys/<hex SHA-256 of the key>.json
	toolUseDir = "tooluse" // one index entry per pending tool call: tooluse/<hex SHA-256 of the id>.json
	lockName   = "lock"    // flock(2) serialising admissions and transitions
)

func nameHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (l *Ledger) keyPath(key string) string {
	return filepath.Join(l.dir, keysDir, nameHash(key)+".json")
}

func (l *Ledger) toolUsePath(id string) string {
	return filepath.Join(l.dir, toolUseDir, nameHash(id)+".json")
}

// toolUseIndex is the content of a tooluse/ file: which key a pending tool call admitted.
type toolUseIndex struct {
	ToolUseID string `json:"tool_use_id"`
	Key       string `json:"key"`
}

// readRecord reads key's record; it returns (nil, nil) when the key has none.
func (l *Ledger) readRecord(key string) (*Record, []byte, error) {
	name := l.keyPath(key)
	data, err := regular.ReadFile(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("barrier: read ledger record for %q: %w", key, err)
	}
	r, err := decodeRecord(data, name)
	if err != nil {
		return nil, nil, err
	}
	if r.Key != key {
		return nil, nil, fmt.Errorf("%w: %s holds key %q, expected %q (a file was copied or renamed by hand; move it away)", ErrCorruptLedger, name, r.Key, key)
	}
	return r, data, nil
}

// readToolUse returns the key a pending tool call admitted, or "" when the ledger has no index
// entry for it.
func (l *Ledger) readToolUse(id string) (string, error) {
	name := l.toolUsePath(id)
	data, err := regular.ReadFile(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", fmt.Errorf("barrier: read tool-call index for %q: %w", id, err)
	}
	var ix toolUseIndex
	if err := json.Unmarshal(data, &ix); err != nil || ix.ToolUseID != id || ix.Key == "" {
		return "", fmt.Errorf("%w: %s is not the index entry of tool call %q (move it away)", ErrCorruptLedger, name, id)
	}
	return ix.Key, nil
}

func encodeRecord(r *Record) ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// ensureDirs creates the ledger directory and its subdirectories.
func (l *Ledger) ensureDirs() error {
	for _, d := range []string{l.dir, filepath.Join(l.dir, keysDir), filepath.Join(l.dir, toolUseDir)} {
		if err := durable.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("barrier: create ledger directory: %w", err)
		}
	}
	return nil
}

// lock takes the ledger's flock in mode how (lockfile.Exclusive or LOCK_SH), creating the
// directory first when exclusive. The kernel drops the lock when the process exits, however it
// exits. A shared lock on a ledger with no directory yet returns a no-op unlock.
func (l *Ledger) lock(how int) (unlock func(), err error) {
	if how == lockfile.Exclusive {
		if err := l.ensureDirs(); err != nil {
			return nil, err
		}
	}
	name := filepath.Join(l.dir, lockName)
	f, err := regular.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if how == lockfile.Shared && errors.Is(err, fs.ErrNotExist) {
			return func() {}, nil
		}
		return nil, fmt.Errorf("barrier: open ledger lock: %w", err)
	}
	if err := lockfile.Lock(f, how); err != nil {
		f.Close()
		return nil, fmt.Errorf("barrier: lock %s: %w", name, err)
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}

// Get returns key's record, or an error wrapping ErrUnknownKey.
func (l *Ledger) Get(key string) (*Record, error) {
	if err := validateKey(key); err != nil {
		return nil, err
	}
	r, _, err := l.readRecord(key)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("%w: %q (list the ledger's keys with agent-rewind effects)", ErrUnknownKey, key)
	}
	return r, nil
}

// List returns every record in the ledger, sorted by first-seen time, then key.
func (l *Ledger) List() ([]*Record, error) {
	dir := filepath.Join(l.dir, keysDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("barrier: list ledger: %w", err)
	}
	var out []*Record
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue // temporary files left by a crash are not records
		}
		name := filepath.Join(dir, e.Name())
		data, err := regular.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("barrier: list ledger: %w", err)
		}
		r, err := decodeRecord(data, name)
		if err != nil {
			return nil, err
		}
		if nameHash(r.Key)+".json" != e.Name() {
			return nil, fmt.Errorf("%w: %s holds key %q, whose file name would be %s.json (move it away)", ErrCorruptLedger, name, r.Key, nameHash(r.Key))
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *Record) int {
		if c := a.FirstSeen.Compare(b.FirstSeen); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out, nil
}
