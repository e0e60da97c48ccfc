package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/conversation"
	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/cli/internal/transcript"
	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/snapshot"
)

// rewind ID --conversation: the files back to the automatic checkpoint before a tool call, and
// the agent session's conversation forked to end just before that call (cli/internal/transcript),
// so that the resumed agent remembers nothing the rewind undid. The fork is planned before
// anything changes: a transcript that cannot be found, of a format not known, or without the
// call, fails the command with neither half rewound.

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
	where, err := transcript.FromEnv()
	if err != nil {
		return err
	}
	plan, err := conversation.Plan(s.store, s.ws.Path(prompts.File), where, ref)
	if err != nil {
		if isTranscriptErr(err) {
			return fmt.Errorf("rewind %s --conversation: %w; nothing was rewound (the files neither)", ref, err)
		}
		return s.resolveError(err)
	}
	call, fork := plan.Call, plan.Fork
	res, err := watch.Restored(s.store, func(hint *snapshot.Changed) (*snapshot.RestoreResult, error) {
		return s.store.Rewind(context.Background(), call.Checkpoint, snapshot.RestoreOptions{DryRun: dryRun, Changed: hint})
	})
	s.done()
	if res == nil {
		return s.resolveError(err)
	}
	out, target := s.restoreOutput(res)
	conv := &ConversationResult{Fork: fork}
	if dryRun {
		fork.ForkSession, fork.Path, fork.Resume, fork.SHA256 = "", "", "", ""
	} else {
		written, seq, cerr := plan.Commit(s.ws, res.OpID, res.To)
		conv.Written, conv.ChainSeq = written, seq
		if cerr != nil && seq == 0 && !errors.Is(cerr, snapshot.ErrNotRecorded) {
			cerr = fmt.Errorf("the files were rewound, but not the conversation: %w (%s undoes the files' rewind)", cerr, out.Undo)
		}
		if cerr != nil {
			err = joinErr(err, cerr)
		}
	}
	full := &ConversationOutput{RestoreOutput: out, Conversation: conv}
	return emitResult(env, full, &out.failure, err, func(w io.Writer) error {
		writeRestore(w, out, target)
		writeConversation(w, call, conv, dryRun)
		return nil
	})
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

// isTranscriptErr reports whether err is about the conversation's transcript, rather than
// about the id given.
func isTranscriptErr(err error) bool {
	for _, e := range []error{transcript.ErrUnsupported, transcript.ErrNotFound, transcript.ErrUnknownFormat, transcript.ErrNoCall} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
