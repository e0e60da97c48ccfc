package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// IDLen is the length of a checkpoint id: 12 lowercase hex digits, the start of the SHA-256 of
// the checkpoint's metadata file (FORMAT.md, "Checkpoint metadata").
const IDLen = 12

// Kind tells a checkpoint asked for by a person or agent from one taken automatically.
type Kind string

// The checkpoint kinds.
const (
	KindNormal Kind = "normal" // taken by Checkpoint
	KindSafety Kind = "safety" // taken by Rewind or Replay before changing the workspace
	KindAuto   Kind = "auto"   // taken by AutoCheckpoint before an agent's tool call
)

// Counts summarises a checkpoint's content.
type Counts struct {
	Files    int   `json:"files"`
	Dirs     int   `json:"dirs"`
	Symlinks int   `json:"symlinks"`
	Skipped  int   `json:"skipped"` // present but not captured (TypeSkipped entries)
	Bytes    int64 `json:"bytes"`   // total size of the files
}

// Checkpoint is a checkpoint's metadata: what List returns for each.
type Checkpoint struct {
	ID       string    `json:"id"`
	Time     time.Time `json:"time"`
	Kind     Kind      `json:"kind"`
	Label    string    `json:"label"`
	Parent   string    `json:"parent,omitempty"` // the position when it was taken; "" for the first
	Manifest Hash      `json:"manifest"`         // sha256 of the manifest bytes
	Counts   Counts    `json:"counts"`
	Call     *ToolCall `json:"call,omitempty"` // KindAuto: the tool call it was taken before
}

// metaFile is the on-disk form: Checkpoint without its id, which is derived from these bytes.
type metaFile struct {
	Format   int       `json:"format"`
	Time     time.Time `json:"time"`
	Kind     Kind      `json:"kind"`
	Label    string    `json:"label"`
	Parent   string    `json:"parent"`
	Manifest Hash      `json:"manifest"`
	Counts   Counts    `json:"counts"`
	Call     *ToolCall `json:"call,omitempty"`
}

// encodeCheckpoint returns the metadata file bytes and the id they define.
func encodeCheckpoint(c *Checkpoint) ([]byte, string) {
	b, _ := json.Marshal(metaFile{Format: 1, Time: c.Time.UTC(), Kind: c.Kind, Label: c.Label, Parent: c.Parent, Manifest: c.Manifest, Counts: c.Counts, Call: c.Call})
	b = append(b, '\n')
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])[:IDLen]
}

// decodeCheckpoint parses and verifies a metadata file named id.
func decodeCheckpoint(id string, b []byte) (*Checkpoint, error) {
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:])[:IDLen] != id {
		return nil, fmt.Errorf("content does not hash to its name %s", id)
	}
	var m metaFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not checkpoint metadata: %v", err)
	}
	if m.Format != 1 {
		return nil, fmt.Errorf("format %d, this program reads format 1 (upgrade agent-rewind)", m.Format)
	}
	if m.Kind != KindNormal && m.Kind != KindSafety && m.Kind != KindAuto {
		return nil, fmt.Errorf("unknown kind %q", m.Kind)
	}
	if (m.Kind == KindAuto) != (m.Call != nil) {
		return nil, fmt.Errorf("kind %q with call %v: an automatic checkpoint, and only one, names its tool call", m.Kind, m.Call != nil)
	}
	if m.Parent != "" && !validID(m.Parent) {
		return nil, fmt.Errorf("parent %q is not a checkpoint id", m.Parent)
	}
	return &Checkpoint{ID: id, Time: m.Time, Kind: m.Kind, Label: m.Label, Parent: m.Parent, Manifest: m.Manifest, Counts: m.Counts, Call: m.Call}, nil
}

func validID(s string) bool { return len(s) == IDLen && objects.IsLowerHex(s) }

// readCheckpoint reads checkpoint id's metadata.
func (s *Store) readCheckpoint(id string) (*Checkpoint, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w: %q is not a full checkpoint id (12 hex digits)", ErrNotFound, id)
	}
	name := filepath.Join(s.state, "checkpoints", id)
	b, err := regular.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (see the timeline: agent-rewind list)", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	c, err := decodeCheckpoint(id, b)
	if err != nil {
		return nil, &CorruptError{Path: name, Reason: err.Error()}
	}
	return c, nil
}

// listCheckpoints reads every checkpoint's metadata, ordered by time then id.
func (s *Store) listCheckpoints() ([]*Checkpoint, error) {
	dir := filepath.Join(s.state, "checkpoints")
	names, err := platform.ReadDirNames(dir)
	if err != nil {
		return nil, err
	}
	var out []*Checkpoint
	for _, n := range names {
		if !validID(n) {
			continue // temporary files of an interrupted write
		}
		c, err := s.readCheckpoint(n)
		if errors.Is(err, ErrNotFound) {
			continue // removed by a concurrent gc
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sortCheckpoints(out)
	return out, nil
}

func sortCheckpoints(cs []*Checkpoint) {
	slices.SortFunc(cs, func(a, b *Checkpoint) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Operation is a rewind or replay as remembered in the position file and recorded on the chain.
type Operation struct {
	Op     string    `json:"op"`     // "rewind" or "replay"
	From   string    `json:"from"`   // the position before it
	To     string    `json:"to"`     // the checkpoint restored
	Safety string    `json:"safety"` // the checkpoint holding the exact state before it
	Time   time.Time `json:"time"`
}

// testHookWritePosition, when set by a test, fails writing the position (an injected ENOSPC).
var testHookWritePosition func() error

// position is the content of StateDir/position.
type position struct {
	Format  int        `json:"format"`
	Current string     `json:"current"`
	Time    time.Time  `json:"time"` // the newest checkpoint's time: new ones are later
	Last    *Operation `json:"last,omitempty"`
	// LastRestore is the last restore of chosen paths: GC keeps its safety checkpoint, the only
	// copy of what those paths held before.
	LastRestore *Operation `json:"lastRestore,omitempty"`
}

func (s *Store) readPosition() (*position, error) {
	name := filepath.Join(s.state, "position")
	b, err := regular.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return &position{Format: 1}, nil
	}
	if err != nil {
		return nil, err
	}
	var p position
	if err := json.Unmarshal(b, &p); err != nil || p.Format != 1 || (p.Current != "" && !validID(p.Current)) {
		return nil, &CorruptError{Path: name, Reason: fmt.Sprintf("not a version 1 position file (%v)", err)}
	}
	return &p, nil
}

func (s *Store) writePosition(p *position) error {
	f, err := s.stagePosition(p)
	if err != nil {
		return err
	}
	return f.Commit()
}

// stagePosition writes p beside the position file and flushes it (durable.Stage): Commit puts
// it in place.
//
// The commit log is settled first: a position made durable by its own sync must not be
// followed, in the log, by records of older positions that a replay would write back.
func (s *Store) stagePosition(p *position) (*durable.Staged, error) {
	settled := make(chan error, 1) // while the new position is written and flushed
	go func() { settled <- s.settleLog() }()
	f, err := func() (*durable.Staged, error) {
		if testHookWritePosition != nil {
			if err := testHookWritePosition(); err != nil {
				return nil, err
			}
		}
		return durable.Stage(filepath.Join(s.state, "position"), encodePosition(p), 0o600)
	}()
	if serr := <-settled; serr != nil {
		if f != nil {
			f.Abort()
		}
		return nil, serr
	}
	return f, err
}
