package upkeep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

const (
	// AutoPackLimit is how many small packs (MergeBelow) make maintenance due (git's
	// gc.autoPackLimit is 50): each costs every later lookup a few microseconds.
	AutoPackLimit = 32
	// RetentionEvery is how often maintenance applies the retention.
	RetentionEvery = 24 * time.Hour
	// StateFile, in the state directory, records when the retention was last applied (FORMAT.md,
	// "Maintenance"); LockFile keeps two maintenances of a store from running at once.
	StateFile = "maintenance"
	LockFile  = "maintenance.lock"
)

// Due says what maintenance has to do.
type Due struct {
	SmallPacks int  `json:"smallPacks"` // packs under 16 MiB when more than 32 (else 0)
	Retention  bool `json:"retention"`  // the retention was last applied more than a day ago
}

// Any reports whether anything is due.
func (d Due) Any() bool { return d.SmallPacks > 0 || d.Retention }

// DueOf says what maintenance of the store at state has to do, cheaply enough for after every
// checkpoint: it counts the packs (those o has loaded, else the folder's), reads their sizes only
// when there are more than AutoPackLimit, and reads the small state file when retention (whether
// the retention of automatic checkpoints is applied at all) is set. A store never maintained is
// not due for the retention alone: it cannot remove anything before a session has more than its
// 100 automatic checkpoints, each of which added a pack; its first maintenance applies it.
func DueOf(o *objects.Store, state string, retention bool) (Due, error) {
	var d Due
	n, err := packCount(o)
	if err != nil {
		return d, err
	}
	if n > AutoPackLimit {
		small, err := SmallPacks(o)
		if err != nil {
			return d, err
		}
		if len(small) > AutoPackLimit {
			d.SmallPacks = len(small)
		}
	}
	if retention {
		st, err := ReadState(state)
		if err != nil {
			return d, err
		}
		d.Retention = !st.Retention.IsZero() && time.Since(st.Retention) >= RetentionEvery
	}
	return d, nil
}

// packCount counts the packs: those o's last writer loaded (under the lock) and wrote, when it
// looked any object up (the hook's checkpoint: this spares it reading the folder, 34 to 3 µs),
// else those the packs folder lists.
func packCount(o *objects.Store) (int, error) {
	if n, loaded := o.LoadedPacks(); loaded {
		return n, nil
	}
	ids, err := o.PackIDs()
	return len(ids), err
}

// State is the content of the state file.
type State struct {
	Retention time.Time `json:"retention"` // when the retention was last applied
}

// ReadState reads the state file of the store at state; a store that has none never had the
// retention applied.
func ReadState(state string) (State, error) {
	var st State
	name := filepath.Join(state, StateFile)
	b, err := regular.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, &objects.CorruptError{Path: name, Reason: fmt.Sprintf("does not parse (%v): remove it, and the next maintenance applies the retention and writes it again", err)}
	}
	return st, nil
}

// WriteState records, durably, that the retention was applied at t.
func WriteState(state string, t time.Time) error {
	b, _ := json.Marshal(State{Retention: t.UTC()})
	return durable.WriteFile(filepath.Join(state, StateFile), b, 0o600)
}
