package command

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/transcript"
	"github.com/agent-rewind/rewind/snapshot"
)

// rewind ID --conversation: the files back to the automatic checkpoint before a tool call, and
// the agent session's conversation forked to end just before that call (cli/internal/transcript),
// so that the resumed agent remembers nothing the rewind undid. The fork is planned before
// anything changes: a transcript that cannot be found, of a format not known, or without the
// call, fails the command with neither half rewound.

// KindConversation is the chain entry of a conversation fork (ConversationEntry).
const KindConversation = "conversation"

// ConversationEntry is the data of a "conversation" chain entry: which fork matches which
// checkpoint, and the SHA-256 of both transcripts; nothing else of them enters the store.
type ConversationEntry struct {
	OpID           string `json:"opId"`       // the rewind's
	Checkpoint     string `json:"checkpoint"` // the state before the call
	Call           string `json:"call"`
	Client         string `json:"client"`
	Session        string `json:"session"`
	ForkSession    string `json:"forkSession"`
	OriginalSHA256 string `json:"originalSha256"`
	ForkSHA256     string `json:"forkSha256"`
}

// ConversationOutput is rewind --conversation's --json shape: rewind's, and the conversation.
type ConversationOutput struct {
	*RestoreOutput
	Conversation *ConversationResult `json:"conversation"`
}

// ConversationResult is the conversation half of a rewind: the fork (in a dry run, only what
// would go back: no session id, path or resume command yet) and its chain entry.
type ConversationResult struct {
	*transcript.Fork
	ChainSeq int64 `json:"chainSeq,omitempty"`
	Written  bool  `json:"written"` // the fork is on disk (false in a dry run, or when writing it failed)
}

func rewindConversation(env *Env, ref string, dryRun bool) error {
	s, err := openSnapshots(env, false)
	if err != nil {
		return err
	}
	defer s.close()
	call, beforePrompt, err := s.promptCall(ref)
	if !beforePrompt && err == nil {
		call, err = callOf(s.store, ref)
	}
	if err != nil {
		return s.resolveError(err)
	}
	where, err := transcript.FromEnv()
	if err != nil {
		return err
	}
	fork, err := transcript.Plan(where, call.Agent, call.Session, transcript.Cut{Call: call.ID, BeforePrompt: beforePrompt})
	if err != nil {
		return fmt.Errorf("rewind %s --conversation: %w; nothing was rewound (the files neither)", ref, err)
	}
	res, err := s.store.Rewind(context.Background(), call.Checkpoint, snapshot.RestoreOptions{DryRun: dryRun})
	s.done()
	if res == nil {
		return s.resolveError(err)
	}
	out, target := s.restoreOutput(res)
	conv := &ConversationResult{Fork: fork}
	if dryRun {
		fork.ForkSession, fork.Path, fork.Resume, fork.SHA256 = "", "", "", ""
	} else if werr := fork.Write(); werr != nil {
		err = joinErr(err, fmt.Errorf("the files were rewound, but not the conversation: %w (%s undoes the files' rewind)", werr, out.Undo))
	} else {
		conv.Written = !fork.Empty
		seq, rerr := s.ws.Record(KindConversation, ConversationEntry{OpID: res.OpID, Checkpoint: res.To, Call: call.ID,
			Client: fork.Client, Session: fork.Session, ForkSession: fork.ForkSession, OriginalSHA256: fork.OriginalSHA256, ForkSHA256: fork.SHA256})
		conv.ChainSeq = seq
		if rerr != nil {
			err = joinErr(err, fmt.Errorf("%w: the conversation fork %s is written, but not recorded: %v", snapshot.ErrNotRecorded, fork.Path, rerr))
		}
	}
	full := &ConversationOutput{RestoreOutput: out, Conversation: conv}
	return emitResult(env, full, &out.failure, err, func(w io.Writer) error {
		writeRestore(w, out, target)
		writeConversation(w, call, conv, dryRun)
		return nil
	})
}

// callOf returns the tool call ref names: a call id, or a checkpoint (any id prefix) taken
// before one, the earliest call whose state it holds when several are.
func callOf(store *snapshot.Store, ref string) (snapshot.CallRecord, error) {
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
		return snapshot.CallRecord{}, fmt.Errorf("rewind %s --conversation: checkpoint %s was taken before no agent's tool call (a checkpoint of yours, or a safety one), so no conversation matches it: give a tool call id, or a checkpoint of kind auto (see agent-rewind list), or rewind without --conversation", ref, cp)
	}
	return *found, nil
}

// shownDroppedCalls is how many of the calls that go back the text names; --json has them all.
const shownDroppedCalls = 5

// writeConversation prints the conversation half of a rewind.
func writeConversation(w io.Writer, call snapshot.CallRecord, conv *ConversationResult, dryRun bool) {
	f := conv.Fork
	ids := f.DroppedCalls
	if len(ids) > shownDroppedCalls {
		ids = append(ids[:shownDroppedCalls:shownDroppedCalls], "…")
	}
	back := fmt.Sprintf("%s and %s (%s) go back", plural(f.DroppedMessages, "conversation turn", "conversation turns"),
		plural(len(f.DroppedCalls), "tool call", "tool calls"), strings.Join(ids, ", "))
	at := "tool call " + call.ID
	if f.BeforePrompt {
		at = "the prompt that led to tool call " + call.ID
	}
	if dryRun {
		fmt.Fprintf(w, "conversation: %s session %s would end just before %s: %s; it would be a new session beside %s, which stays as it is\n",
			f.Client, f.Session, at, back, f.Original)
		return
	}
	if f.Empty {
		fmt.Fprintf(w, "conversation: %s goes back to before the session's first prompt (%s), so there is nothing to resume: start a new session: %s\n", f.Client, back, f.Resume)
		return
	}
	if !conv.Written {
		return // not written: the error says why
	}
	fmt.Fprintf(w, "conversation: new %s session %s ends just before %s (%s); the original session %s is unchanged\n",
		f.Client, f.ForkSession, at, back, f.Session)
	fmt.Fprintf(w, "resume it: %s\n", f.Resume)
}

// joinErr keeps the first error and adds the second.
func joinErr(a, b error) error {
	if a == nil {
		return b
	}
	return fmt.Errorf("%w; and %w", a, b)
}
