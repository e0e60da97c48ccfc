package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
)

// Workspace is what the MCP tools act on: one workspace's checkpoints, effect barrier, failure
// memory and gateway receipt. The cli module passes the real one (snapshot + barrier + chain +
// failure memory); tests pass a fake. mcpserver validates every input before it calls a method,
// so an implementation receives ids, labels and keys within the limits in validate.go.
//
// Each method is one tool call. An error it returns is shown to the agent as a tool error
// (isError) with the error's text, so the text should say what was wrong and what to do. Wrap
// [ErrUnknownCheckpoint] or [ErrBusy] when they apply: the agent then gets a specific next step.
// A guard refusal is not an error: return a GuardResult with Admitted false.
//
// Implementations must be safe for concurrent use: a client may send calls in parallel.
type Workspace interface {
	// Checkpoint snapshots the whole workspace under label (possibly empty).
	Checkpoint(ctx context.Context, label string) (CheckpointResult, error)
	// List returns the timeline, newest first.
	List(ctx context.Context) (ListResult, error)
	// Rewind restores checkpoint req.ID, checkpointing the current state first; with
	// req.Conversation it also forks the agent session's conversation to end before that tool
	// call, and RestoreResult.Resume is the command that resumes the fork.
	Rewind(ctx context.Context, req RewindRequest) (RestoreResult, error)
	// Replay moves forward to checkpoint id, a checkpoint recorded after the current position
	// (typically the safety checkpoint of an earlier rewind).
	Replay(ctx context.Context, id string) (RestoreResult, error)
	// GuardEffect admits or refuses an external effect under req.Key. Without a confirmation
	// channel an admitted key is spent at once.
	GuardEffect(ctx context.Context, req GuardRequest) (GuardResult, error)
	// Savings returns the gateway's replay-savings receipt, zeros and a note when there is none.
	Savings(ctx context.Context) (SavingsResult, error)
	// BacktrackCandidates returns the checkpoints worth going back to, most promising first.
	BacktrackCandidates(ctx context.Context) (CandidatesResult, error)
	// BacktrackCommit records a failure note against req.ID in failure memory (durably, and on
	// the chain), then rewinds to req.ID as Rewind does.
	BacktrackCommit(ctx context.Context, req BacktrackRequest) (BacktrackResult, error)
}

// RewindRequest is the input of the rewind tool and of [Workspace.Rewind].
type RewindRequest struct {
	ID string `json:"id"`
	// Conversation: also fork the session's conversation (clients whose transcripts the
	// workspace can fork: Claude Code, Codex CLI).
	Conversation bool `json:"conversation,omitempty" jsonschema:"Also fork your chat to end before it"`
}

// GuardRequest is the input of the guard_effect tool and of [Workspace.GuardEffect].
type GuardRequest struct {
	// Key names the effect stably: the same effect retried must use the same key.
	Key string `json:"key" jsonschema:"Stable name, e.g. deploy:prod:v42"`
	// Payload is the effect's parameters as a JSON object, or nil. The barrier fingerprints it
	// (canonical JSON: the SDK may re-encode what the client sent) to tell a retry from a key
	// reused with other parameters.
	Payload json.RawMessage `json:"payload,omitempty" jsonschema:"The effect's parameters"`
	// Description says what the effect is, for the record.
	Description string `json:"description,omitempty"`
}

// BacktrackRequest is the input of the backtrack_commit tool and of [Workspace.BacktrackCommit].
type BacktrackRequest struct {
	// ID is the checkpoint to go back to and to record the note against.
	ID string `json:"id"`
	// WhatFailed says what was tried after that checkpoint and how it failed.
	WhatFailed string `json:"what_failed" jsonschema:"What was tried and how it failed"`
	// Lesson is what to do differently next time; optional.
	Lesson string `json:"lesson,omitempty" jsonschema:"What to do differently"`
}

// ErrUnknownCheckpoint is what a Workspace wraps when an id names no checkpoint. The tool error
// then tells the agent where valid ids come from.
var ErrUnknownCheckpoint = errors.New("unknown checkpoint")

// ErrBusy is what a Workspace wraps when another process holds the workspace lock. The tool
// error then tells the agent to wait and call again.
var ErrBusy = errors.New("workspace busy")
