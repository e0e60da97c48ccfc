package conversation

import (
	"fmt"

	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/cli/internal/transcript"
	"github.com/agent-rewind/rewind/snapshot"
)

// Kind is the chain entry of a conversation fork (Entry).
const Kind = "conversation"

// Entry is the data of a "conversation" chain entry: which fork matches which checkpoint, and
// the SHA-256 of both transcripts; nothing else of them enters the store.
type Entry struct {
	OpID           string `json:"opId"`       // the rewind's
	Checkpoint     string `json:"checkpoint"` // the state before the call
	Call           string `json:"call"`
	Client         string `json:"client"`
	Session        string `json:"session"`
	ForkSession    string `json:"forkSession"`
	OriginalSHA256 string `json:"originalSha256"`
	ForkSHA256     string `json:"forkSha256"`
}

// Recorder appends an entry to the hash chain (a *workspace.Workspace).
type Recorder interface {
	Record(kind string, data any) (int64, error)
}

// Planned is a conversation rewind planned, nothing written yet.
type Planned struct {
	Call snapshot.CallRecord // the tool call; its Checkpoint is what the files go back to
	Fork *transcript.Fork
}

// Plan resolves ref in store (promptLog is the store's prompt log) and plans the fork of its
// session's conversation, reading the transcripts where w says. It writes nothing: any error
// leaves both halves as they are.
func Plan(store *snapshot.Store, promptLog string, w transcript.Where, ref string) (*Planned, error) {
	call, beforePrompt, err := PromptCall(store, promptLog, ref)
	if !beforePrompt && err == nil {
		call, err = CallOf(store, ref)
	}
	if err != nil {
		return nil, err
	}
	ps, err := prompts.Read(promptLog)
	if err != nil {
		return nil, err
	}
	w.Reported = prompts.Transcripts(ps) // exact where the prompt hook said; else found by id
	fork, err := transcript.Plan(w, call.Agent, call.Session, transcript.Cut{Call: call.ID, BeforePrompt: beforePrompt})
	if err != nil {
		return nil, err
	}
	return &Planned{Call: call, Fork: fork}, nil
}

// Commit writes the fork after the files' rewind opID (to checkpoint) and records it on the
// chain. written is false when there was nothing to write (a fork before the session's first
// prompt) or writing failed.
func (p *Planned) Commit(rec Recorder, opID, checkpoint string) (written bool, seq int64, err error) {
	f := p.Fork
	if err := f.Write(); err != nil {
		return false, 0, err
	}
	seq, err = rec.Record(Kind, Entry{OpID: opID, Checkpoint: checkpoint, Call: p.Call.ID, Client: f.Client,
		Session: f.Session, ForkSession: f.ForkSession, OriginalSHA256: f.OriginalSHA256, ForkSHA256: f.SHA256})
	if err != nil {
		err = fmt.Errorf("%w: the conversation fork %s is written, but not recorded: %v", snapshot.ErrNotRecorded, f.Path, err)
	}
	return !f.Empty, seq, err
}

// CallOf returns the tool call ref names: a call id, or a checkpoint (any id prefix) taken
// before one, the earliest call whose state it holds when several are.
func CallOf(store *snapshot.Store, ref string) (snapshot.CallRecord, error) {
	tl, err := store.List()
	if err != nil {
		return snapshot.CallRecord{}, err
	}
	var found *snapshot.CallRecord
	for _, sess := range tl.Sessions {
		for i := range sess.Calls {
			if c := &sess.Calls[i]; c.ID == ref && (found == nil || c.Time.After(found.Time)) {
				found = c
			}
		}
	}
	if found != nil {
		return *found, nil
	}
	cp, err := store.Resolve(ref)
	if err != nil {
		return snapshot.CallRecord{}, err
	}
	for _, sess := range tl.Sessions {
		for i := range sess.Calls {
			if c := &sess.Calls[i]; c.Checkpoint == cp && (found == nil || c.Time.Before(found.Time)) {
				found = c
			}
		}
	}
	if found == nil {
		return snapshot.CallRecord{}, fmt.Errorf("checkpoint %s was taken before no agent's tool call (a checkpoint of yours, or a safety one), so no conversation matches it: give a tool call id, or a checkpoint of kind auto (see list), or rewind the files alone", cp)
	}
	return *found, nil
}

// PromptCall resolves "prompt:N" (list numbers the logged prompts) to the first tool call
// made for prompt N, whose automatic checkpoint holds the state before the prompt's work. ok
// is false when ref is not of that form.
func PromptCall(store *snapshot.Store, promptLog, ref string) (call snapshot.CallRecord, ok bool, err error) {
	n, ok, err := prompts.ParseRef(ref)
	if !ok || err != nil {
		return call, ok, err
	}
	tl, err := store.List()
	if err != nil {
		return call, true, err
	}
	ps, err := prompts.Read(promptLog)
	if err != nil {
		return call, true, err
	}
	_, call, err = prompts.FirstCall(ps, tl.Sessions, n)
	return call, true, err
}
