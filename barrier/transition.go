package barrier

import (
	"fmt"
	"strings"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/lockfile"
)

// Confirm marks the effect admitted for tool call toolUseID as spent (pending → spent): the
// agent reported that the call ran (PostToolUse). by names who reports, for the record (e.g.
// "hook:claude-code PostToolUse"). A tool call the ledger never admitted as pending is
// CodeUntracked, and a key no longer pending under that call is CodeUnchanged; neither records
// anything.
func (l *Ledger) Confirm(toolUseID, by string) (Decision, error) {
	return l.transitionToolUse(toolUseID, Spent, CodeConfirmed, "", by, func(r *Record) (string, any) {
		return KindConfirm, ConfirmEntry{Key: r.Key, ToolUseID: toolUseID, AdmissionSeq: r.Seq, By: by}
	})
}

// Fail marks the effect admitted for tool call toolUseID as failed (pending → failed): the agent
// reported that the call failed (PostToolUseFailure). errText is the agent's error text;
// interrupt tells whether the person interrupted the call. A failed key stays refused until a
// person releases it, because a failed call may still have had an external effect.
func (l *Ledger) Fail(toolUseID, errText string, interrupt bool, by string) (Decision, error) {
	reason := shorten(errText, 500)
	if interrupt {
		reason = strings.TrimSpace("interrupted by the user. " + reason)
	}
	if reason == "" {
		reason = "the tool call failed"
	}
	return l.transitionToolUse(toolUseID, Failed, CodeMarked, reason, by, func(r *Record) (string, any) {
		return KindFailure, FailureEntry{Key: r.Key, ToolUseID: toolUseID, AdmissionSeq: r.Seq, Error: shorten(errText, 500), Interrupt: interrupt, By: by}
	})
}

// ReleaseToolUse re-arms the effect admitted for tool call toolUseID (pending → released),
// because the call never ran: the agent's permission system denied it (PermissionDenied).
func (l *Ledger) ReleaseToolUse(toolUseID, reason, by string) (Decision, error) {
	if strings.TrimSpace(reason) == "" {
		reason = "permission denied"
	}
	reason = shorten(reason, 500)
	return l.transitionToolUse(toolUseID, Released, CodeReleased, reason, by, func(r *Record) (string, any) {
		return KindRelease, ReleaseEntry{Key: r.Key, From: r.State, AdmissionSeq: r.Seq, ToolUseID: toolUseID, Reason: reason, By: by}
	})
}

// Release re-arms key, whatever its state: the next admission under it is a new generation. It
// is a person's action (`agent-rewind release <key> --reason ...`), never an agent's; reason is
// required and recorded. A key already released is CodeUnchanged and records nothing.
func (l *Ledger) Release(key, reason, by string) (Decision, error) {
	if err := validateKey(key); err != nil {
		return Decision{}, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return Decision{}, fmt.Errorf("barrier: release %q: %w: say why the key may fire again, e.g. --reason \"the charge was refunded\"", key, ErrReasonRequired)
	}
	reason = shorten(reason, 500)
	unlock, err := l.lock(lockfile.Exclusive)
	if err != nil {
		return Decision{}, err
	}
	defer unlock()
	r, _, err := l.readRecord(key)
	if err != nil {
		return Decision{}, err
	}
	if r == nil {
		return Decision{}, fmt.Errorf("barrier: release %q: %w (check the spelling; the refusal text names the key exactly)", key, ErrUnknownKey)
	}
	if r.State == Released {
		return Decision{Admitted: true, Code: CodeUnchanged, State: r.State, Key: key, Record: r, Reason: "already released"}, nil
	}
	entry := ReleaseEntry{Key: key, From: r.State, AdmissionSeq: r.Seq, ToolUseID: r.ToolUseID, Reason: reason, By: by}
	return l.applyLocked(r, Released, CodeReleased, reason, by, "", KindRelease, entry)
}

// transitionToolUse moves the record admitted for toolUseID from pending to to.
func (l *Ledger) transitionToolUse(toolUseID string, to State, code Code, reason, by string, entry func(*Record) (string, any)) (Decision, error) {
	if toolUseID == "" {
		return Decision{Admitted: true, Code: CodeUntracked, Reason: "no tool_use_id to look up"}, nil
	}
	// Unlocked first look: most tool calls were never effects, and finding that out must cost
	// one failed open, not a lock.
	key, err := l.readToolUse(toolUseID)
	if err != nil {
		return Decision{}, err
	}
	if key == "" {
		return Decision{Admitted: true, Code: CodeUntracked, Reason: "the ledger admitted no effect for this tool call"}, nil
	}
	unlock, err := l.lock(lockfile.Exclusive)
	if err != nil {
		return Decision{}, err
	}
	defer unlock()
	r, _, err := l.readRecord(key)
	if err != nil {
		return Decision{}, err
	}
	if r == nil || r.ToolUseID != toolUseID {
		return Decision{Admitted: true, Code: CodeUntracked, Key: key, Reason: "the key's current generation belongs to another tool call"}, nil
	}
	if r.State != Pending {
		return Decision{Admitted: true, Code: CodeUnchanged, State: r.State, Key: key, Record: r,
			Reason: fmt.Sprintf("the key is %s, not pending", r.State)}, nil
	}
	kind, data := entry(r)
	return l.applyLocked(r, to, code, reason, by, toolUseID, kind, data)
}

// applyLocked records the transition of r to state to on the chain, then writes it: a state
// changes only once it is recorded, and each transition carries the seq of its entry. After a
// crash between the two, the chain shows a transition the ledger lacks; the ledger then still
// refuses, which is the safe side.
func (l *Ledger) applyLocked(r *Record, to State, code Code, reason, by, toolUseID, kind string, entry any) (Decision, error) {
	seq, err := l.rec.Record(kind, entry)
	if err != nil {
		return Decision{}, fmt.Errorf("barrier: %w: %s of effect %q: %v (nothing changed; fix the chain, then retry)", ErrNotRecorded, kind, r.Key, err)
	}
	from := r.State
	r.State = to
	r.History = append(r.History, Transition{At: l.now(), From: from, To: to, Seq: seq, Reason: reason, By: by, ToolUseID: toolUseID})
	data, err := encodeRecord(r)
	if err == nil {
		err = durable.WriteFile(l.keyPath(r.Key), data, 0o600)
	}
	if err != nil {
		return Decision{}, fmt.Errorf("barrier: write ledger record for %q after chain entry %d: %w", r.Key, seq, err)
	}
	if from == Pending && r.ToolUseID != "" {
		// The index entry has served its purpose; removing it keeps tooluse/ small. A failure
		// here is harmless (Confirm checks the record), so it is not reported.
		_ = durable.Remove(l.toolUsePath(r.ToolUseID))
	}
	return Decision{Admitted: true, Code: code, State: to, Key: r.Key, Record: r, Seq: &seq, Reason: reason}, nil
}
