package barrier

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/lockfile"
)

// Request asks the ledger to admit one effect.
type Request struct {
	Key         string          // the effect key (see ErrInvalidKey for what is accepted)
	Payload     json.RawMessage // the effect's parameters, any JSON value; nil means null
	Description string          // what the effect is, for people and refusal texts
	ToolUseID   string          // the agent's tool call id, where known
	// Confirmable asks for a pending admission, confirmed later by Confirm/Fail/ReleaseToolUse
	// with ToolUseID (agent hooks). Without it, or without a ToolUseID, the key is spent at once
	// (the MCP guard_effect tool, the explicit CLI form, Cursor hooks).
	Confirmable bool
	Checkpoint  string // the checkpoint current now, as the caller names it ("" if none)
	Source      string // who asks: "hook:claude-code", "hook:codex", "hook:cursor", "mcp", "cli"
	Rule        string // the effect rule that matched (hooks)
	// NewKeyHint tells the agent how to name a distinct new effect from where it called, for
	// refusal texts, e.g. "call guard_effect with a new key".
	NewKeyHint string
}

// testHookAdmit, when set by a test helper, is called at the named stage of an admission:
// "linked" once the pending record is durable but not yet on the chain, "admitted" once the
// admission is complete and the guard would answer.
var testHookAdmit func(stage string)

// Admit decides whether the effect in req may fire, and records the decision.
//
// When the Recorder is an Intender, the admission's entry is noted before the record is
// written, so that a process killed between writing the record and recording it leaves a note
// the next writer records late (see Intender).
//
// A key with no record, or a released one, is admitted: its record is written durably (and, for
// a confirmable request, its tool-call index) before Admit returns, and an "effect" entry is
// recorded. When N processes race on one new key exactly one is admitted. Any other key is
// refused with a reason for the agent, and a "refusal" entry is recorded: the code is
// payload_mismatch when the payload differs from the admitted one, otherwise the key's state
// (spent, pending, failed). A second request from the same tool call (same ToolUseID and
// payload) while pending is a duplicate, admitted without recording again: two hooks
// configured on one call must not refuse each other.
//
// On error the effect must be refused: an admission that could not be recorded is undone. A
// refusal whose recording failed returns the refusal Decision together with an error wrapping
// ErrNotRecorded.
func (l *Ledger) Admit(req Request) (Decision, error) {
	if err := validateKey(req.Key); err != nil {
		return Decision{}, err
	}
	canon, err := Canonical(req.Payload)
	if err != nil {
		return Decision{}, fmt.Errorf("barrier: payload of effect %q: %w (send one JSON value without repeated member names)", req.Key, err)
	}
	fp := fingerprintCanonical(canon)

	// Fast path, no lock: a key that exists and is not released is refused. Files appear whole
	// (link, rename), so an unlocked read never sees half a record.
	r, _, err := l.readRecord(req.Key)
	if err != nil {
		return Decision{}, err
	}
	if r != nil && r.State != Released && r.Seq == Unrecorded {
		// An admission may be in flight: its owner holds the exclusive lock until the admission
		// is on the chain. Wait for it briefly so that the chain shows the admission before this
		// refusal, and the refusal can cite it, then read again. (After a crash the seq stays
		// Unrecorded and nobody holds the lock: no wait.)
		unlock, err := l.lock(lockfile.Shared)
		if err != nil {
			return Decision{}, err
		}
		r, _, err = l.readRecord(req.Key)
		unlock()
		if err != nil {
			return Decision{}, err
		}
	}
	if r != nil && r.State != Released {
		return l.decideExisting(req, fp, r)
	}

	unlock, err := l.lock(lockfile.Exclusive)
	if err != nil {
		return Decision{}, err
	}
	d, refuseOn, err := l.admitLocked(req, fp)
	unlock()
	if refuseOn != nil {
		return l.decideExisting(req, fp, refuseOn)
	}
	if err == nil && testHookAdmit != nil {
		testHookAdmit("admitted")
	}
	return d, err
}

// admitLocked admits req under the exclusive lock. It returns the record to refuse on when the
// key turned out to be taken.
func (l *Ledger) admitLocked(req Request, fp string) (Decision, *Record, error) {
	old, oldData, err := l.readRecord(req.Key)
	if err != nil {
		return Decision{}, nil, err
	}
	if old != nil && old.State != Released {
		return Decision{}, old, nil
	}
	now := l.now()
	state := Spent
	if req.Confirmable && req.ToolUseID != "" {
		state = Pending
	}
	r := &Record{
		Format:      RecordFormat,
		Key:         req.Key,
		Fingerprint: fp,
		State:       state,
		FirstSeen:   now,
		ToolUseID:   req.ToolUseID,
		Checkpoint:  req.Checkpoint,
		Description: shorten(req.Description, 300),
		Source:      req.Source,
		Rule:        req.Rule,
		Generation:  1,
		Seq:         Unrecorded, // until the admission is on the chain
	}
	var from State
	if old != nil {
		r.Generation = old.Generation + 1
		r.History = old.History
		from = old.State
	}
	r.History = append(r.History, Transition{At: now, From: from, To: state, Seq: Unrecorded, By: req.Source, ToolUseID: req.ToolUseID})

	if state == Pending {
		// The index goes first: a dangling index entry is harmless (Confirm checks the record),
		// a pending record that PostToolUse cannot find is not.
		ix, _ := json.Marshal(toolUseIndex{ToolUseID: req.ToolUseID, Key: req.Key})
		if err := durable.WriteFile(l.toolUsePath(req.ToolUseID), append(ix, '\n'), 0o600); err != nil {
			return Decision{}, nil, fmt.Errorf("barrier: write tool-call index: %w", err)
		}
	}
	data, err := encodeRecord(r)
	if err != nil {
		return Decision{}, nil, err
	}
	name := l.keyPath(req.Key)
	record, drop, err := l.intend(KindEffect, EffectEntry{
		Key: r.Key, Fingerprint: fp, State: state, Generation: r.Generation, ToolUseID: r.ToolUseID,
		Checkpoint: r.Checkpoint, Description: r.Description, Rule: r.Rule, Source: r.Source,
	}, name, data)
	if err != nil {
		return Decision{}, nil, fmt.Errorf("barrier: %w: admission of effect %q: %v (the effect is refused; fix the chain, then retry)", ErrNotRecorded, req.Key, err)
	}
	if old == nil {
		created, err := durable.CreateExclusive(name, data, 0o600)
		if err != nil {
			drop()
			return Decision{}, nil, fmt.Errorf("barrier: write ledger record for %q: %w", req.Key, err)
		}
		if !created { // a writer that does not take the lock (never this package) got there first
			drop()
			taken, _, err := l.readRecord(req.Key)
			if err != nil || taken == nil {
				return Decision{}, nil, fmt.Errorf("barrier: ledger record for %q appeared and vanished: %v", req.Key, err)
			}
			return Decision{}, taken, nil
		}
	} else if err := durable.WriteFile(name, data, 0o600); err != nil {
		drop()
		return Decision{}, nil, fmt.Errorf("barrier: write ledger record for %q: %w", req.Key, err)
	}
	if testHookAdmit != nil {
		testHookAdmit("linked")
	}

	seq, recErr := record()
	if recErr != nil {
		// Undo: an admission that is not on the chain must not happen. The guard has not
		// answered yet, so the effect has not run.
		var undoErr error
		if old == nil {
			undoErr = durable.Remove(name)
		} else {
			undoErr = durable.WriteFile(name, oldData, 0o600)
		}
		err := fmt.Errorf("barrier: %w: admission of effect %q: %v (the effect is refused; fix the chain, then retry)", ErrNotRecorded, req.Key, recErr)
		if undoErr != nil {
			err = errors.Join(err, fmt.Errorf("barrier: undoing the admission of %q also failed, so the key stays %s until released: %w", req.Key, state, undoErr))
		}
		return Decision{}, nil, err
	}
	r.Seq = seq
	r.History[len(r.History)-1].Seq = seq
	if data, err = encodeRecord(r); err == nil {
		err = durable.WriteFile(name, data, 0o600)
	}
	if err != nil {
		// The admission is durable and on the chain; only its seq is missing from the record.
		// Refuse anyway (the caller fails closed): the disk is in trouble.
		return Decision{}, nil, fmt.Errorf("barrier: note chain seq %d in the ledger record for %q: %w", seq, req.Key, err)
	}
	return Decision{Admitted: true, Code: CodeAdmitted, State: state, Key: r.Key, Record: r, Seq: &seq,
		Reason: fmt.Sprintf("admitted as %s", state)}, nil, nil
}

// decideExisting refuses req on the existing record r (or admits a duplicate of its own call),
// and records the refusal without holding the ledger lock.
func (l *Ledger) decideExisting(req Request, fp string, r *Record) (Decision, error) {
	if r.State == Pending && req.ToolUseID != "" && r.ToolUseID == req.ToolUseID && r.Fingerprint == fp {
		return Decision{Admitted: true, Code: CodeDuplicate, State: r.State, Key: r.Key, Record: r,
			Reason: "the same tool call was already admitted (a second hook on one call)"}, nil
	}
	code := Code(r.State)
	if r.Fingerprint != fp {
		code = CodePayloadMismatch
	}
	reason := refusalReason(code, req, fp, r)
	d := Decision{Admitted: false, Code: code, State: r.State, Key: r.Key, Reason: reason, Record: r}
	seq, err := l.rec.Record(KindRefusal, RefusalEntry{
		Key: r.Key, Code: code, State: r.State, Fingerprint: fp, AdmissionSeq: r.Seq,
		ToolUseID: req.ToolUseID, Checkpoint: req.Checkpoint, Source: req.Source, Reason: reason,
	})
	if err != nil {
		return d, fmt.Errorf("barrier: %w: refusal of effect %q: %v (the effect is still refused)", ErrNotRecorded, r.Key, err)
	}
	d.Seq = &seq
	return d, nil
}
