package barrier

// Recorder appends an entry to the tamper-evident chain. data marshals with encoding/json to a
// JSON object; the returned seq is the new entry's sequence number. The barrier defines this
// interface so that it imports no sibling module: the CLI passes an adapter over the real chain.
//
// A Ledger calls Record while holding its own lock for admissions and transitions (never for
// refusals); the chain's lock must therefore be the innermost lock. The Ledger only calls Record
// when something is recorded, so an adapter may open the chain lazily.
type Recorder interface {
	Record(kind string, data any) (seq int64, err error)
}

// Intender is implemented by a Recorder that keeps the chain complete across a crash between
// a commit and its record. Before an admission writes its ledger record (content to file, the
// commit), the ledger calls Intend, which notes the admission's entry durably; after the commit
// it calls record (which appends the entry and clears the note), or drop when the commit did
// not happen. A note left by a killed process is recorded late by the next writer, marked so.
// Transitions need none: they are recorded before they are written.
type Intender interface {
	Intend(kind string, data any, file string, content []byte) (record func() (int64, error), drop func(), err error)
}

// intend notes an entry before the commit it describes when the Recorder can (Intender), and
// returns how to record it after the commit and how to drop the note when the commit fails.
func (l *Ledger) intend(kind string, data any, file string, content []byte) (record func() (int64, error), drop func(), err error) {
	if in, ok := l.rec.(Intender); ok {
		return in.Intend(kind, data, file, content)
	}
	return func() (int64, error) { return l.rec.Record(kind, data) }, func() {}, nil
}

// The kinds of chain entries the barrier records, with the data type of each.
const (
	KindEffect  = "effect"  // an admission: EffectEntry
	KindConfirm = "confirm" // pending → spent: ConfirmEntry
	KindFailure = "failure" // pending → failed: FailureEntry
	KindRefusal = "refusal" // a refused admission: RefusalEntry
	KindRelease = "release" // → released: ReleaseEntry
)

// EffectEntry is the data of a KindEffect entry: an effect was admitted.
type EffectEntry struct {
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`           // "sha256:<hex>" of the canonical payload
	State       State  `json:"state"`                 // pending (hooks with a tool_use_id) or spent
	Generation  int    `json:"generation"`            // 1, or more after releases
	ToolUseID   string `json:"tool_use_id,omitempty"` // the agent's tool call id
	Checkpoint  string `json:"checkpoint,omitempty"`  // the checkpoint current at admission
	Description string `json:"description,omitempty"`
	Rule        string `json:"rule,omitempty"` // the effect rule that matched (hooks)
	Source      string `json:"source"`         // "hook:claude-code", "hook:codex", "hook:cursor", "mcp", "cli"
}

// ConfirmEntry is the data of a KindConfirm entry: a pending effect's tool call succeeded.
type ConfirmEntry struct {
	Key          string `json:"key"`
	ToolUseID    string `json:"tool_use_id"`
	AdmissionSeq int64  `json:"admission_seq"` // the chain seq of the KindEffect entry
	By           string `json:"by"`            // e.g. "hook:claude-code PostToolUse"
}

// FailureEntry is the data of a KindFailure entry: a pending effect's tool call failed.
type FailureEntry struct {
	Key          string `json:"key"`
	ToolUseID    string `json:"tool_use_id"`
	AdmissionSeq int64  `json:"admission_seq"`
	Error        string `json:"error,omitempty"`     // the agent's error text, shortened
	Interrupt    bool   `json:"interrupt,omitempty"` // the person interrupted the call
	By           string `json:"by"`
}

// RefusalEntry is the data of a KindRefusal entry: an admission was refused.
type RefusalEntry struct {
	Key          string `json:"key"`
	Code         Code   `json:"code"`                  // why: spent, payload_mismatch, pending, failed
	State        State  `json:"state"`                 // the key's state
	Fingerprint  string `json:"fingerprint"`           // the refused attempt's payload fingerprint
	AdmissionSeq int64  `json:"admission_seq"`         // the chain seq of the key's admission (Unrecorded, -1, if it never reached the chain)
	ToolUseID    string `json:"tool_use_id,omitempty"` // the refused tool call
	Checkpoint   string `json:"checkpoint,omitempty"`  // the checkpoint current at the refusal
	Source       string `json:"source"`
	Reason       string `json:"reason"` // the text given to the agent
}

// ReleaseEntry is the data of a KindRelease entry: a key was re-armed.
type ReleaseEntry struct {
	Key          string `json:"key"`
	From         State  `json:"from"` // the state it left
	AdmissionSeq int64  `json:"admission_seq"`
	ToolUseID    string `json:"tool_use_id,omitempty"`
	Reason       string `json:"reason"`
	By           string `json:"by"` // "cli" for a person, "hook:claude-code PermissionDenied" for a denial
}
