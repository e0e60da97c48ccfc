package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// Journal is the content of StateDir/journal: a rewind or replay in flight (FORMAT.md, "Journal").
type Journal struct {
	Format int       `json:"format"`
	Op     string    `json:"op"`     // "rewind", "replay" or "restore" (chosen paths)
	OpID   string    `json:"opId"`   // random; repeated in the chain record, so a duplicate is recognisable
	From   string    `json:"from"`   // the position before the operation
	To     string    `json:"to"`     // the checkpoint being restored
	Safety string    `json:"safety"` // the checkpoint holding the state before the operation
	Time   time.Time `json:"time"`
	Paths  []string  `json:"paths,omitempty"` // "restore" only: the chosen paths
}

// Read returns the journal in the file name, or nil when there is none (no operation is in
// flight). A journal that is not a valid version 1 one (its checkpoint ids checked by validID)
// is an *objects.CorruptError: it was written durably, so it was changed outside agent-rewind.
func Read(name string, validID func(string) bool) (*Journal, error) {
	b, err := regular.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil || j.Format != 1 || !validID(j.To) || !validID(j.Safety) || !validOp(j) {
		return nil, &objects.CorruptError{Path: name, Reason: fmt.Sprintf("not a version 1 journal (%v); it was written durably, so it was changed outside agent-rewind: check the workspace, then delete the file", err)}
	}
	return &j, nil
}

// validOp reports whether j's operation is one this version writes, with its paths.
func validOp(j Journal) bool {
	switch j.Op {
	case "rewind", "replay":
		return len(j.Paths) == 0
	case "restore":
		for _, p := range j.Paths {
			if manifest.CheckPath(p) != nil {
				return false
			}
		}
		return len(j.Paths) > 0
	}
	return false
}

// Write writes j (as version 1) to the file name, durably.
func Write(name string, j *Journal) error {
	j.Format = 1
	b, _ := json.Marshal(j)
	return durable.WriteFile(name, append(b, '\n'), 0o600)
}
