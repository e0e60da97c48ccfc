package barrier

import (
	"encoding/json"
	"fmt"
	"time"
)

// RecordFormat is the version of the ledger record this package writes.
const RecordFormat = 1

// State is where an effect key stands.
type State string

// The states of a key. A key with no record is new.
const (
	// Pending: admitted, and waiting for its tool call's outcome (PostToolUse confirms it,
	// PostToolUseFailure fails it, PermissionDenied releases it). A pending key is refused:
	// after a crash its outcome is unknown until a person reconciles it.
	Pending State = "pending"
	// Spent: the effect fired. Refused forever, until a person releases it.
	Spent State = "spent"
	// Failed: the tool call reported a failure. Refused until a person releases it, because a
	// failure may still have had an external effect.
	Failed State = "failed"
	// Released: re-armed by a person (or by the agent's PermissionDenied event, which means the
	// call never ran). The next admission under this key starts a new generation.
	Released State = "released"
)

// Unrecorded is the Seq of a record or transition that is not (yet) on the chain: an admission
// in flight, or one whose process died before recording it. Seq 0 is the chain's first entry.
const Unrecorded int64 = -1

// Record is one effect key's entry in the ledger: the current generation of the key, plus the
// history of every transition of every generation. It is stored as JSON (see the package doc).
type Record struct {
	Format      int          `json:"format"`                // RecordFormat
	Key         string       `json:"key"`                   // the effect key
	Fingerprint string       `json:"fingerprint"`           // "sha256:<hex>" of the canonical payload
	State       State        `json:"state"`                 // where the key stands
	FirstSeen   time.Time    `json:"first_seen"`            // when this generation was admitted (UTC)
	ToolUseID   string       `json:"tool_use_id,omitempty"` // the agent's tool call id, where known
	Checkpoint  string       `json:"checkpoint,omitempty"`  // the checkpoint current at admission
	Seq         int64        `json:"seq"`                   // chain seq of the admission entry; Unrecorded (-1): not (yet) on the chain
	Description string       `json:"description,omitempty"` // what the effect is, for people
	Source      string       `json:"source,omitempty"`      // who asked: "hook:claude-code", "mcp", "cli", ...
	Rule        string       `json:"rule,omitempty"`        // the effect rule that matched, for hook admissions
	Generation  int          `json:"generation"`            // 1 for the first admission, +1 after each release
	History     []Transition `json:"history"`               // every transition, oldest first
}

// Transition is one state change of a key, with the chain entry that records it.
type Transition struct {
	At        time.Time `json:"at"`                    // when (UTC)
	From      State     `json:"from,omitempty"`        // "" for an admission of a new key
	To        State     `json:"to"`                    // the new state
	Seq       int64     `json:"seq"`                   // chain seq of the entry; Unrecorded (-1): not on the chain
	Reason    string    `json:"reason,omitempty"`      // why (releases, failures)
	By        string    `json:"by,omitempty"`          // who: "hook:claude-code PostToolUse", "cli", ...
	ToolUseID string    `json:"tool_use_id,omitempty"` // the tool call that caused it, where known
}

// Refused reports whether an admission under this record's key is refused in its current state.
func (r *Record) Refused() bool { return r.State != Released }

func decodeRecord(data []byte, name string) (*Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %s: %v (the file is not a ledger record; restore the store from a backup, or move the file away to forget that key)", ErrCorruptLedger, name, err)
	}
	if r.Format > RecordFormat {
		return nil, fmt.Errorf("%w: %s is format %d, this agent-rewind reads %d: upgrade agent-rewind", ErrNewerFormat, name, r.Format, RecordFormat)
	}
	switch r.State {
	case Pending, Spent, Failed, Released:
	default:
		return nil, fmt.Errorf("%w: %s has state %q, not one of pending, spent, failed, released", ErrCorruptLedger, name, r.State)
	}
	if r.Key == "" {
		return nil, fmt.Errorf("%w: %s has no key", ErrCorruptLedger, name)
	}
	return &r, nil
}
