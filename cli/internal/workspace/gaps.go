package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot"
)

// Gaps is what ChainGaps finds: durable operations the chain does not record, and chain entries
// naming checkpoints or effects the store does not hold. Every list is empty (never nil) when
// the record is complete.
type Gaps struct {
	ChainSize int64 `json:"chainSize"` // entries compared
	// Notes of entries in flight whose process is gone: the next writer records each one late
	// (when its operation committed) or drops it.
	Leftover []LeftoverNote `json:"leftover"`
	// Checkpoints (ids) with no "checkpoint" entry.
	UnrecordedCheckpoints []string `json:"unrecordedCheckpoints"`
	// Ledger admissions with no "effect" entry.
	UnrecordedEffects []EffectGap `json:"unrecordedEffects"`
	// "checkpoint" entries whose checkpoint does not exist and that no "gc" entry removed.
	MissingCheckpoints []EntryGap `json:"missingCheckpoints"`
	// "effect" entries whose key, or that generation of it, the ledger does not hold.
	MissingEffects []EntryGap `json:"missingEffects"`
}

// LeftoverNote is a note of an entry in flight (IntentsDir) whose writer is gone.
type LeftoverNote struct {
	File      string    `json:"file"`      // the note
	Kind      string    `json:"kind"`      // the entry's kind
	Time      time.Time `json:"time"`      // when its operation was about to commit
	Committed bool      `json:"committed"` // the operation committed: the entry is owed
}

// EffectGap is one admission of an effect key that the chain does not record.
type EffectGap struct {
	Key        string        `json:"key"`
	Generation int           `json:"generation"`
	State      barrier.State `json:"state"` // what the admission made the key
	At         time.Time     `json:"at"`    // when
}

// EntryGap is a chain entry naming something the store does not hold.
type EntryGap struct {
	Seq        int64  `json:"seq"`
	ID         string `json:"id,omitempty"`  // the checkpoint
	Key        string `json:"key,omitempty"` // the effect key
	Generation int    `json:"generation,omitempty"`
}

// Complete reports whether nothing is missing on either side.
func (g *Gaps) Complete() bool {
	return len(g.Leftover)+len(g.UnrecordedCheckpoints)+len(g.UnrecordedEffects)+len(g.MissingCheckpoints)+len(g.MissingEffects) == 0
}

// ChainGaps compares the chain with the store and reports every checkpoint and every effect
// admission in the ledger that has no chain entry, every "checkpoint" or "effect" entry naming
// one that does not exist, and the notes of entries in flight left by processes that died
// (Intend). It records nothing and changes nothing (opening the chain may bring its derived
// files up to date), and reads the whole chain: O(entries + checkpoints + ledger records).
// "agent-rewind chain verify" prints it after the chain verifies; "agent-rewind check" reports
// it. A chain that cannot be read (missing is not an error: then everything is unrecorded)
// is an error.
func (w *Workspace) ChainGaps() (*Gaps, error) {
	g := &Gaps{Leftover: []LeftoverNote{}, UnrecordedCheckpoints: []string{}, UnrecordedEffects: []EffectGap{}, MissingCheckpoints: []EntryGap{}, MissingEffects: []EntryGap{}}
	var err error
	if g.Leftover, err = w.leftoverNotes(); err != nil {
		return nil, err
	}
	type admission struct {
		key string
		gen int
	}
	checkpoints := map[string]int64{} // id → seq
	removed := map[string]bool{}      // ids a "gc" entry removed
	effects := map[admission]int64{}
	c, err := w.ExistingChain()
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		defer c.Close()
		err = c.Each(func(e hashchain.Entry) error {
			g.ChainSize++
			var d struct {
				ID         string `json:"id"`
				Key        string `json:"key"`
				Generation int    `json:"generation"`
			}
			switch e.Kind {
			case "checkpoint":
				if json.Unmarshal(e.Data, &d) == nil && d.ID != "" {
					checkpoints[d.ID] = e.Seq
				}
			case "gc":
				var gc snapshot.GCRecord
				if json.Unmarshal(e.Data, &gc) == nil {
					for _, id := range gc.Removed {
						removed[id] = true
					}
				}
			case barrier.KindEffect:
				if json.Unmarshal(e.Data, &d) == nil && d.Key != "" {
					effects[admission{d.Key, d.Generation}] = e.Seq
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}

	// Checkpoints: one file per checkpoint, named by its id (snapshot/FORMAT.md).
	ids, err := checkpointIDs(w.Path("checkpoints"))
	if err != nil {
		return nil, err
	}
	exist := map[string]bool{}
	for _, id := range ids {
		exist[id] = true
		if _, ok := checkpoints[id]; !ok {
			g.UnrecordedCheckpoints = append(g.UnrecordedCheckpoints, id)
		}
	}
	for id, seq := range checkpoints {
		if !exist[id] && !removed[id] {
			g.MissingCheckpoints = append(g.MissingCheckpoints, EntryGap{Seq: seq, ID: id})
		}
	}

	l, err := w.Ledger()
	if err != nil {
		return nil, err
	}
	records, err := l.List()
	if err != nil {
		return nil, err
	}
	held := map[admission]bool{}
	for _, r := range records {
		gen := 0
		for _, t := range r.History {
			if (t.From != "" && t.From != barrier.Released) || (t.To != barrier.Pending && t.To != barrier.Spent) {
				continue // not an admission
			}
			gen++
			a := admission{r.Key, gen}
			held[a] = true
			if _, ok := effects[a]; !ok {
				g.UnrecordedEffects = append(g.UnrecordedEffects, EffectGap{Key: r.Key, Generation: gen, State: t.To, At: t.At})
			}
		}
	}
	for a, seq := range effects {
		if !held[a] {
			g.MissingEffects = append(g.MissingEffects, EntryGap{Seq: seq, Key: a.key, Generation: a.gen})
		}
	}
	bySeq := func(a, b EntryGap) int { return int(a.Seq - b.Seq) }
	slices.SortFunc(g.MissingCheckpoints, bySeq)
	slices.SortFunc(g.MissingEffects, bySeq)
	return g, nil
}

// checkpointIDs lists the checkpoint ids in dir, sorted.
func checkpointIDs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// leftoverNotes lists the notes of entries in flight whose writers are gone, without taking
// them over.
func (w *Workspace) leftoverNotes() ([]LeftoverNote, error) {
	dir := w.Path(IntentsDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []LeftoverNote{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := []LeftoverNote{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := filepath.Join(dir, e.Name())
		// Through regular, which shares deletion on Windows: a live writer removes its note
		// while this handle is open (os.Open's would make that removal fail there). Read
		// through the locked handle: on Windows a lock keeps every other handle out.
		f, err := regular.Open(name)
		if err != nil {
			continue
		}
		if lockfile.Lock(f, lockfile.Shared|lockfile.NonBlocking) != nil {
			f.Close() // a live note
			continue
		}
		b, rerr := io.ReadAll(f)
		f.Close()
		if rerr != nil {
			continue
		}
		var in intent
		if err := json.Unmarshal(b, &in); err != nil {
			return nil, fmt.Errorf("%s is not a note of an entry in flight (%v): look at it, then remove it", name, err)
		}
		ok, err := w.committed(&in)
		if err != nil {
			return nil, err
		}
		out = append(out, LeftoverNote{File: name, Kind: in.Kind, Time: in.Time, Committed: ok})
	}
	return out, nil
}
