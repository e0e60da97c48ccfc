package workspace

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/internal/regular"
)

// IntentsDir holds the notes of chain entries in flight: intents/<16 hex>.json, one per
// operation that a leaf module is about to commit (a checkpoint, an effect admission). A note
// is written durably before the commit and removed once the entry is on the chain, so that a
// process killed in between leaves it behind, and the next writer records the entry late.
const IntentsDir = "intents"

// intentFormat is the version of an intents/ file.
const intentFormat = 1

// intent is the content of an intents/ file.
type intent struct {
	Format    int             `json:"format"`
	Kind      string          `json:"kind"`      // the entry's kind
	Data      json.RawMessage `json:"data"`      // the entry's data
	Time      time.Time       `json:"time"`      // when the operation was about to commit (UTC)
	ChainSize int64           `json:"chainSize"` // the chain file's size in bytes then: the entry, if recorded, is after it
	// The operation committed when File (relative to the store when inside it) holds content
	// whose hex SHA-256 is SHA256.
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// LateKey is the member a late entry's data gains (see Intend): {"time": when the operation
// committed, "reason": why it was recorded late}.
const LateKey = "recorded_late"

// Intend notes durably that an entry (kind, data) is about to be recorded, before the caller
// commits the operation it describes by writing content to file. After the commit the caller
// calls record, which appends the entry and removes the note; if the commit did not happen, it
// calls drop. A note outlives its process only when the process dies (or recording fails) in
// between: the next writer of this workspace (any Record or Intend) then finds it, and if file
// holds content and the chain has no such entry since the note was written, appends the entry
// with data[LateKey] = {"time": the note's time, "reason": …}. Live notes are told from
// leftovers by an flock their writer holds until record or drop.
//
// With Intend a *Workspace satisfies the leaf modules' optional Intender interfaces.
func (w *Workspace) Intend(kind string, data any, file string, content []byte) (record func() (int64, error), drop func(), err error) {
	_, _, record, drop, err = w.intend(kind, data, file, content, true)
	return record, drop, err
}

// IntendLogged is Intend with the note written but not synced: the snapshot store's commit
// log, synced once for the whole checkpoint, holds the note's content (note, b) and writes it
// back after a power cut (snapshot.LogIntender).
func (w *Workspace) IntendLogged(kind string, data any, file string, content []byte) (note string, b []byte, record func() (int64, error), drop func(), err error) {
	return w.intend(kind, data, file, content, false)
}

func (w *Workspace) intend(kind string, data any, file string, content []byte, sync bool) (note string, b []byte, record func() (int64, error), drop func(), err error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return "", nil, nil, nil, fmt.Errorf("record %q: data: %w", kind, err)
	}
	sum := sha256.Sum256(content)
	in := intent{Format: intentFormat, Kind: kind, Data: raw, Time: time.Now().UTC(), File: w.storeRel(file), SHA256: hex.EncodeToString(sum[:])}

	// The chain's size, without its lock: record opens (and checks) the chain after the commit.
	if st, err := os.Stat(w.ChainPath()); err == nil {
		in.ChainSize = st.Size()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil, nil, fmt.Errorf("record %q on the hash chain: %w", kind, err)
	}
	name, f, b, err := w.writeIntent(&in, sync)
	if err != nil {
		return "", nil, nil, nil, fmt.Errorf("note the %q entry about to be recorded: %w", kind, err)
	}
	done := false
	finish := func(remove bool) {
		if done {
			return
		}
		done = true
		if remove {
			os.Remove(name) // not fsynced: a note that reappears after a power loss is found recorded
		}
		f.Close() // releases the flock
	}
	record = func() (int64, error) {
		seq, err := w.Record(kind, json.RawMessage(raw))
		finish(err == nil) // on failure the note stays for the next writer
		return seq, err
	}
	return name, b, record, func() { finish(true) }, nil
}

// storeRel names file relative to the store when it is inside it, so that notes survive the
// store being moved.
func (w *Workspace) storeRel(file string) string {
	if rel, err := filepath.Rel(w.Meta, file); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return file
}

// writeIntent writes in under a new name, durably when sync, and returns the name, the open
// file, whose flock marks the note as live, and the note's content. The flock is taken before
// the name appears.
func (w *Workspace) writeIntent(in *intent, sync bool) (string, *os.File, []byte, error) {
	dir := w.Path(IntentsDir)
	if err := os.Mkdir(dir, 0o700); err == nil {
		if err := durable.SyncDir(w.Meta); err != nil {
			return "", nil, nil, err
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return "", nil, nil, err
	}
	// Through regular, which on Windows shares deletion: the note is renamed, and later
	// removed, while this handle (and its lock) stays open.
	var tmpID [8]byte
	rand.Read(tmpID[:])
	f, err := regular.OpenFile(filepath.Join(dir, ".tmp-"+hex.EncodeToString(tmpID[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, nil, err
	}
	fail := func(err error) (string, *os.File, []byte, error) {
		os.Remove(f.Name())
		f.Close()
		return "", nil, nil, err
	}
	if err := lockfile.Lock(f, lockfile.Exclusive|lockfile.NonBlocking); err != nil {
		return fail(err)
	}
	b, _ := json.Marshal(in)
	b = append(b, '\n')
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	var id [8]byte
	rand.Read(id[:])
	name := filepath.Join(dir, hex.EncodeToString(id[:])+".json")
	rename := durable.Rename
	if !sync {
		rename = os.Rename
	}
	if err := rename(f.Name(), name); err != nil {
		if _, serr := os.Lstat(name); serr == nil {
			os.Remove(name) // renamed, but its folder not synced
			f.Close()
			return "", nil, nil, err
		}
		return fail(err)
	}
	return name, f, b, nil
}

// leftover is a note whose writer is gone, held locked by the caller until close.
type leftover struct {
	name string
	f    *os.File
	in   intent
}

func (l *leftover) close() { l.f.Close() }

// leftovers returns the notes whose writers are gone (their flock is free), each locked so
// that no other process handles it at the same time. Notes of live writers are skipped.
func (w *Workspace) leftovers() ([]*leftover, error) {
	dir := w.Path(IntentsDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []*leftover
	for _, e := range ents {
		name := filepath.Join(dir, e.Name())
		f, err := regular.Open(name) // shares deletion on Windows: removed while open
		if err != nil {
			continue // removed meanwhile
		}
		if lockfile.Lock(f, lockfile.Exclusive|lockfile.NonBlocking) != nil {
			f.Close() // a live note
			continue
		}
		// Still the file at that name? Its writer may have removed it just before we locked.
		fst, err1 := f.Stat()
		nst, err2 := os.Lstat(name)
		if err1 != nil || err2 != nil || !os.SameFile(fst, nst) {
			f.Close()
			continue
		}
		if strings.HasPrefix(e.Name(), ".tmp-") { // a writer died before naming its note
			os.Remove(name)
			f.Close()
			continue
		}
		l := &leftover{name: name, f: f}
		// Through the locked handle: on Windows a lock keeps every other handle out.
		b, err := io.ReadAll(f)
		if err == nil {
			err = json.Unmarshal(b, &l.in)
		}
		if err != nil || l.in.Format != intentFormat || l.in.Kind == "" {
			f.Close()
			for _, o := range out {
				o.close()
			}
			return nil, fmt.Errorf("%s is not a note of an entry in flight (format %d; %v): it was written durably, so it was changed outside agent-rewind; look at it, then remove it", name, intentFormat, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// committed reports whether the note's operation committed: its file holds the content.
func (w *Workspace) committed(in *intent) (bool, error) {
	name := in.File
	if !filepath.IsAbs(name) {
		name = w.Path(name)
	}
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]) == in.SHA256, nil
}

// recordedSince reports whether the chain has the note's entry after the note was written.
func recordedSince(c *hashchain.Chain, in *intent) (bool, error) {
	es, err := c.After(in.ChainSize)
	if err != nil {
		return false, err
	}
	for _, e := range es {
		if e.Kind == in.Kind && sameJSON(e.Data, in.Data) {
			return true, nil
		}
	}
	return false, nil
}

// sameJSON compares two JSON values as values (the chain stores data re-encoded canonically).
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// recordLeftoversLocked records late what leftover notes describe, on c; w.mu is held.
func (w *Workspace) recordLeftoversLocked(c *hashchain.Chain) error {
	ls, err := w.leftovers()
	if err != nil {
		return err
	}
	defer func() {
		for _, l := range ls {
			l.close()
		}
	}()
	// In the order the operations happened.
	slices.SortFunc(ls, func(a, b *leftover) int { return a.in.Time.Compare(b.in.Time) })
	for _, l := range ls {
		if err := recordLate(w, c, l); err != nil {
			return fmt.Errorf("record late what %s notes (a %q entry): %w", l.name, l.in.Kind, err)
		}
		if err := os.Remove(l.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// recordLate appends the note's entry, marked late, when its operation committed and the chain
// lacks it.
func recordLate(w *Workspace, c *hashchain.Chain, l *leftover) error {
	ok, err := w.committed(&l.in)
	if err != nil || !ok {
		return err // not committed: nothing happened that the chain lacks
	}
	if ok, err = recordedSince(c, &l.in); err != nil || ok {
		return err
	}
	var data map[string]any
	d := json.NewDecoder(bytes.NewReader(l.in.Data))
	d.UseNumber() // keep numbers as written
	if err := d.Decode(&data); err != nil || data == nil {
		return fmt.Errorf("data is not a JSON object: %w", err)
	}
	data[LateKey] = map[string]any{
		"time":   l.in.Time.Format(time.RFC3339Nano),
		"reason": "the operation was committed, but its process ended (or failed to record it) before its entry was appended; a later writer found its note and recorded it",
	}
	_, err = c.Append(l.in.Kind, data)
	return err
}
