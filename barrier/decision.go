package barrier

import "fmt"

// Code is a stable machine-readable name for a Decision's outcome.
type Code string

// Decision codes. Refusals: CodeSpent, CodePayloadMismatch, CodePending, CodeFailed.
const (
	CodeAdmitted  Code = "admitted"  // a new (or released) key was admitted
	CodeDuplicate Code = "duplicate" // the same tool call asked twice (two hooks on one call): admitted, not re-recorded

	CodeSpent           Code = "spent"            // refused: the effect already fired
	CodePayloadMismatch Code = "payload_mismatch" // refused: the key was used with another payload
	CodePending         Code = "pending"          // refused: an earlier attempt's outcome is unknown
	CodeFailed          Code = "failed"           // refused: an earlier attempt failed

	CodeConfirmed Code = "confirmed" // pending → spent
	CodeMarked    Code = "marked_failed"
	CodeReleased  Code = "released"  // → released
	CodeUnchanged Code = "unchanged" // a transition that did not apply (already in that state, other generation)
	CodeUntracked Code = "untracked" // a Post*/PermissionDenied event for a tool call the ledger never admitted

	CodeNotEffect  Code = "not_effect"  // PreToolUse of a call no rule classifies as an effect
	CodeNotHandled Code = "not_handled" // a hook event the guard does not act on
)

// Decision is the outcome of one barrier operation.
type Decision struct {
	// Admitted is true when the call may proceed: admitted, a duplicate of an admitted call, not
	// an effect, or any confirmation/release. It is false only for refusals.
	Admitted bool `json:"admitted"`
	// Code names the outcome (see the Code constants).
	Code Code `json:"code"`
	// State is the key's state after the operation ("" when no key is involved).
	State State `json:"state,omitempty"`
	// Key is the effect key ("" when no key is involved).
	Key string `json:"key,omitempty"`
	// Reason is, for a refusal, the text for the agent: what happened, and what to do. For other
	// outcomes it is a short explanation.
	Reason string `json:"reason,omitempty"`
	// Record is the key's ledger record after the operation, when there is one.
	Record *Record `json:"record,omitempty"`
	// Seq is the chain seq of the entry this operation recorded; nil when it recorded none.
	// (The chain's first entry is seq 0, so 0 cannot mean "none".)
	Seq *int64 `json:"seq,omitempty"`
}

// Refused reports whether the decision refuses the call.
func (d Decision) Refused() bool { return !d.Admitted && d.Code != "" }

// String is a one-line summary for logs and the CLI's text output.
func (d Decision) String() string {
	switch {
	case d.Code == "":
		return "no decision"
	case d.Refused():
		return fmt.Sprintf("refused %q (%s)", d.Key, d.Code)
	case d.Key != "":
		return fmt.Sprintf("%s %q (%s)", d.Code, d.Key, d.State)
	default:
		return string(d.Code)
	}
}
