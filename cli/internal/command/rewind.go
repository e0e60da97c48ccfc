package command

import (
	"context"
	"fmt"
	"io"

	"github.com/agent-rewind/rewind/cli/internal/conversation"
	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/snapshot"
)

// RewindCmd restores any checkpoint of the timeline, after checkpointing the state it leaves.
type RewindCmd struct {
	ID     string `arg:"" help:"The checkpoint to restore: its id, or a unique prefix of at least 4 hex digits, a tool call's id (the state before it), or prompt:N (before the work of prompt N; see list)."`
	DryRun bool   `help:"Print what the rewind would change, and change nothing (no safety checkpoint, no lock)."`
	// Conversation: conversation.go.
	Conversation bool `help:"Also make the agent session's conversation end just before the tool call (ID a tool call id, or its automatic checkpoint): a new session beside the original transcript (Claude Code, Codex CLI), and the command that resumes it. Details: docs/checkpoints.md."`
}

// Run rewinds.
func (c *RewindCmd) Run(env *Env) error {
	if c.Conversation {
		return rewindConversation(env, c.ID, c.DryRun)
	}
	return restore(env, "rewind", c.ID, c.DryRun)
}

// ReplayCmd moves forward to a checkpoint recorded after the current position.
type ReplayCmd struct {
	ID     string `arg:"" help:"The checkpoint to move forward to, recorded after the current position, such as the safety checkpoint a rewind printed."`
	DryRun bool   `help:"Print what the replay would change, and change nothing."`
}

// Run replays.
func (c *ReplayCmd) Run(env *Env) error { return restore(env, "replay", c.ID, c.DryRun) }

// RestoreOutput is the --json shape of rewind and replay: the module's result
// (snapshot.RestoreResult: op, opId, from, to, safety, safetyCreated, dryRun, changes, kept,
// chainSeq, elapsedMs, safetyCheckpoint), the changes counted by kind, the command that undoes
// this one, and error/exitCode when the restore was done but something after it failed.
type RestoreOutput struct {
	*snapshot.RestoreResult
	Counts ChangeCounts `json:"counts"`
	Undo   string       `json:"undo,omitempty"` // e.g. "agent-rewind replay 9abc0123def4"; absent in a dry run or when nothing changed
	// Retry is the command that restores the target's version of the paths left alone because
	// they were in use (kept with "live": true), once nothing writes to them; absent when none.
	Retry string `json:"retry,omitempty"`
	Store string `json:"store"` // the store's folder, outside the workspace ("agent-rewind store")
	failure
}

// shownChanges is how many changed paths rewind and replay print in text; --json has them all.
const shownChanges = 20

// restore runs a rewind or replay (op) to ref and prints what it changed.
func restore(env *Env, op, ref string, dryRun bool) error {
	s, err := openSnapshots(env, false)
	if err != nil {
		return err
	}
	defer s.close()
	move := s.store.Rewind
	if op == "replay" {
		move = s.store.Replay
	} else if call, ok, err := conversation.PromptCall(s.store, s.ws.Path(prompts.File), ref); ok {
		if err != nil {
			return err
		}
		ref = call.Checkpoint
	}
	res, err := watch.Restored(s.store, func(hint *snapshot.Changed) (*snapshot.RestoreResult, error) {
		return move(context.Background(), ref, snapshot.RestoreOptions{DryRun: dryRun, Changed: hint})
	})
	s.done()
	if res == nil {
		return s.resolveError(err)
	}
	out, target := s.restoreOutput(res)
	return emitResult(env, out, &out.failure, err, func(w io.Writer) error {
		writeRestore(w, out, target)
		return nil
	})
}

// restoreOutput is the result of a rewind or replay as the command prints it, and its target.
func (s *snapshotSession) restoreOutput(res *snapshot.RestoreResult) (*RestoreOutput, *snapshot.Checkpoint) {
	out := &RestoreOutput{RestoreResult: res, Counts: countChanges(res.Changes), Store: s.ws.Meta}
	target, _ := s.store.Get(res.To) // for the label and time shown; the restore itself succeeded
	if !res.DryRun {
		out.Undo = undoCommand(res, target)
		out.Retry = retryCommand(res)
	}
	return out, target
}

// undoCommand returns the command that puts back the state a restore left: a replay of the
// safety checkpoint when it is later than the target (the usual rewind to the past), else a
// rewind to it. "" when the restore changed nothing.
func undoCommand(res *snapshot.RestoreResult, target *snapshot.Checkpoint) string {
	if res.Safety == "" || res.Safety == res.To {
		return ""
	}
	if res.SafetyResult != nil && target != nil && res.SafetyResult.Time.After(target.Time) {
		return "agent-rewind replay " + res.Safety
	}
	return "agent-rewind rewind " + res.Safety
}

// retryCommand returns the command that finishes a restore that left paths in use alone: a
// rewind to the same checkpoint (a replay to the current position would be refused), which
// checkpoints their state first like any rewind. "" when none was left alone for that reason.
func retryCommand(res *snapshot.RestoreResult) string {
	for _, k := range res.Kept {
		if k.Live {
			return "agent-rewind rewind " + res.To
		}
	}
	return ""
}

// writeRestore prints a restore result.
func writeRestore(w io.Writer, out *RestoreOutput, target *snapshot.Checkpoint) {
	res := out.RestoreResult
	name := res.To
	if target != nil {
		name = fmt.Sprintf("%s (%s", res.To, localTime(target.Time))
		if target.Label != "" {
			name += fmt.Sprintf(", %q", target.Label)
		}
		name += ")"
	}
	past := map[string]string{"rewind": "rewound", "replay": "replayed"}[res.Op]
	switch {
	case res.DryRun && len(res.Changes) == 0:
		fmt.Fprintf(w, "%s to %s would change nothing: the workspace equals it\n", res.Op, name)
	case res.DryRun:
		fmt.Fprintf(w, "%s to %s would change %s: %s\n", res.Op, name, plural(len(res.Changes), "path", "paths"), out.Counts)
	case len(res.Changes) == 0 && out.Retry != "":
		fmt.Fprintf(w, "%s to %s: nothing changed; the workspace differs from it only in the paths left alone below\n", past, name)
	case len(res.Changes) == 0:
		fmt.Fprintf(w, "%s to %s: the workspace already equalled it, nothing changed\n", past, name)
	default:
		fmt.Fprintf(w, "%s to %s: %s\n", past, name, out.Counts)
	}
	writeChanges(w, res.Changes, shownChanges)
	if len(res.Kept) > 0 {
		fmt.Fprintf(w, "left alone (%s):\n", plural(len(res.Kept), "path", "paths"))
		for i, k := range res.Kept {
			if i == shownChanges {
				fmt.Fprintf(w, "  … and %s more (--json lists them)\n", count(len(res.Kept)-i))
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", printable(k.Path), k.Reason)
		}
	}
	if out.Retry != "" {
		fmt.Fprintf(w, "paths in use were left as they are, so nothing of them was lost; to get the target's version of them, stop what writes to them, then run: %s\n", out.Retry)
	}
	if res.DryRun {
		fmt.Fprintln(w, "dry run: nothing was changed")
		return
	}
	if res.SafetyCreated {
		fmt.Fprintf(w, "safety checkpoint %s holds the state you left\n", res.Safety)
	} else if out.Undo != "" {
		fmt.Fprintf(w, "the state you left is checkpoint %s (nothing had changed since it)\n", res.Safety)
	}
	if out.Undo != "" {
		fmt.Fprintf(w, "undo: %s\n", out.Undo)
	}
}
