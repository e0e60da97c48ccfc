package agentws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/agent-rewind/rewind/cli/internal/conversation"
	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/cli/internal/transcript"
	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/snapshot"
)

const checkpointIDLen = snapshot.IDLen

// Options configure New.
type Options struct {
	// Log receives one line per event the agent's answer cannot carry (an interrupted rewind
	// finished on open, a torn memory line moved aside). nil discards them. The MCP server
	// passes stderr: stdout carries only protocol.
	Log io.Writer
	// Watch: checkpoints use the workspace's change watcher (cli/internal/watch), starting one
	// when none runs. Only the agent-rewind binary may set it (it runs itself as the watcher).
	Watch bool
}

// Workspace implements mcpserver.Workspace over a real workspace: the snapshot store, the
// effect ledger, failure memory and the hash chain in the workspace's store (outside root). It is safe for
// concurrent use. No store is created until a call needs to write (Checkpoint,
// GuardEffect, or BacktrackCommit and Rewind/Replay of an existing checkpoint); the store is
// made in the state base, never under root.
type Workspace struct {
	root  string // absolute, symlinks resolved
	log   io.Writer
	watch bool // Options.Watch

	mu sync.Mutex
	ws *workspace.Workspace // nil until the store exists; then held, with the chain it opens
}

var _ mcpserver.Workspace = (*Workspace)(nil)

// New returns the Workspace rooted at root, which must be an existing directory. It reads and
// creates nothing else.
func New(root string, opts Options) (*Workspace, error) {
	ws, err := workspace.At(root)
	if err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	return &Workspace{root: ws.Root, log: log, watch: opts.Watch}, nil
}

// Root returns the workspace root (absolute, symlinks resolved).
func (w *Workspace) Root() string { return w.root }

// Close releases the hash chain, if a call opened it.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ws == nil {
		return nil
	}
	return w.ws.Close()
}

// open returns the opened workspace. With create, the store is made on first use; without, a
// workspace that has no store yet returns nil and no error (nothing to read). Once a store is
// open, every call first checks that it is still the one opened (workspace.Check): a store
// removed, moved or replaced under the server fails the call loudly, and nothing is written
// into deleted files or made again half-empty.
func (w *Workspace) open(create bool) (*workspace.Workspace, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ws != nil {
		return w.ws, w.ws.Check()
	}
	ws, err := workspace.Open(w.root)
	if errors.Is(err, workspace.ErrNotInitialized) {
		if !create {
			return nil, nil
		}
		ws, err = workspace.Init(w.root)
	}
	if err != nil {
		return nil, err
	}
	w.ws = ws
	return ws, nil
}

// snapshots opens the checkpoint store. It is opened per call: opening is cheap, finishes a
// rewind another process left interrupted, and every read goes to the files, so checkpoints made
// by other processes (the CLI, another server) are seen at once. A nil store and no error means
// the workspace has no store yet (only without create).
func (w *Workspace) snapshots(create bool) (*workspace.Workspace, *snapshot.Store, error) {
	ws, err := w.open(create)
	if err != nil || ws == nil {
		return nil, nil, err
	}
	s, err := ws.Snapshots(nil)
	if err != nil {
		return nil, nil, err
	}
	if r := s.Recovered(); r != nil {
		fmt.Fprintf(w.log, "agent-rewind: finished an interrupted %s to %s (%s, %d paths changed)\n", r.Journal.Op, r.Journal.To, r.Outcome, r.Changes)
	}
	return ws, s, nil
}

// Checkpoint implements mcpserver.Workspace.
func (w *Workspace) Checkpoint(ctx context.Context, label string) (mcpserver.CheckpointResult, error) {
	ws, s, err := w.snapshots(true)
	if err != nil {
		return mcpserver.CheckpointResult{}, err
	}
	var res *snapshot.CheckpointResult
	if w.watch {
		res, err = watch.Checkpoint(ctx, s, w.root, ws.Meta, label, true)
	} else {
		res, err = s.Checkpoint(ctx, label)
	}
	if err != nil {
		if res != nil && errors.Is(err, snapshot.ErrNotRecorded) {
			return mcpserver.CheckpointResult{}, fmt.Errorf("checkpoint %s was taken and is durable (you may rewind to it), but it is missing from the hash chain: %w", res.ID, err)
		}
		return mcpserver.CheckpointResult{}, err
	}
	return mcpserver.CheckpointResult{
		ID: res.ID, Label: res.Label, Time: res.Time, Workspace: ws.Root,
		Files: int64(res.Counts.Files), Bytes: res.Counts.Bytes, Skipped: int64(res.Counts.Skipped),
	}, nil
}

// List implements mcpserver.Workspace.
func (w *Workspace) List(context.Context) (mcpserver.ListResult, error) {
	ws, s, err := w.snapshots(false)
	if err != nil || s == nil {
		return mcpserver.ListResult{Entries: []mcpserver.TimelineEntry{}}, err
	}
	t, err := s.List()
	if err != nil {
		return mcpserver.ListResult{}, err
	}
	r := mcpserver.ListResult{Current: t.Current, Entries: make([]mcpserver.TimelineEntry, 0, len(t.Checkpoints))}
	for _, c := range slices.Backward(t.Checkpoints) {
		r.Entries = append(r.Entries, mcpserver.TimelineEntry{
			ID: c.ID, Time: c.Time, Label: c.Label, Parent: c.Parent, Kind: timelineKind(c.Kind),
		})
	}
	ps, err := prompts.Read(ws.Path(prompts.File))
	if err != nil {
		return mcpserver.ListResult{}, err
	}
	r.Calls = callSteps(t.Sessions, ps)
	return r, nil
}

// callSteps lists the tool calls of every session, newest first, each with the label of what
// ran ("Bash: npm install") and the prompt that led to it, where ps logged one.
func callSteps(sessions []snapshot.Session, ps []prompts.Prompt) []mcpserver.CallStep {
	promptOf := map[string]string{} // by session and call id
	for _, sg := range prompts.GroupCalls(ps, sessions) {
		for _, g := range sg.Groups {
			for _, c := range g.Calls {
				if g.Prompt != nil {
					promptOf[c.Session+"\x00"+c.ID] = fmt.Sprintf("%s%d %s", prompts.Ref, g.N, g.Prompt.Text)
				}
			}
		}
	}
	var all []snapshot.CallRecord
	for _, s := range sessions {
		all = append(all, s.Calls...)
	}
	slices.SortStableFunc(all, func(a, b snapshot.CallRecord) int { return b.Time.Compare(a.Time) })
	out := make([]mcpserver.CallStep, 0, len(all))
	for _, c := range all {
		label := c.Tool
		if c.Summary != "" {
			label += ": " + c.Summary
		}
		out = append(out, mcpserver.CallStep{ID: c.ID, Session: c.Session, Checkpoint: c.Checkpoint, Label: label, Prompt: promptOf[c.Session+"\x00"+c.ID]})
	}
	return out
}

func timelineKind(k snapshot.Kind) string {
	switch k {
	case snapshot.KindSafety:
		return mcpserver.KindSafety
	case snapshot.KindAuto:
		return mcpserver.KindAuto
	}
	return mcpserver.KindCheckpoint
}

// Rewind implements mcpserver.Workspace; with req.Conversation, the conversation half too
// (cli/internal/conversation), planned before the files change, so that a transcript that
// cannot be forked leaves both as they are.
func (w *Workspace) Rewind(ctx context.Context, req mcpserver.RewindRequest) (mcpserver.RestoreResult, error) {
	ws, s, err := w.snapshots(false)
	if err != nil {
		return mcpserver.RestoreResult{}, err
	}
	if s == nil {
		return mcpserver.RestoreResult{}, noCheckpointsYet(req.ID)
	}
	if !req.Conversation {
		id := req.ID
		if call, ok, err := conversation.PromptCall(s, ws.Path(prompts.File), id); ok {
			if err != nil {
				return mcpserver.RestoreResult{}, err
			}
			id = call.Checkpoint // the state before the prompt's first call
		}
		r, _, err := w.restoreIn(ctx, s, "rewind", id)
		return r, err
	}
	where, err := transcript.FromEnv()
	if err != nil {
		return mcpserver.RestoreResult{}, err
	}
	plan, err := conversation.Plan(s, ws.Path(prompts.File), where, req.ID)
	if err != nil {
		return mcpserver.RestoreResult{}, fmt.Errorf("%w; nothing was rewound, neither files nor conversation (without conversation, rewind restores the files alone)", checkpointError(err))
	}
	r, res, err := w.restoreIn(ctx, s, "rewind", plan.Call.Checkpoint)
	if err != nil {
		return r, err
	}
	if _, _, err := plan.Commit(ws, res.OpID, res.To); err != nil {
		return mcpserver.RestoreResult{}, fmt.Errorf("the files were rewound to %s (rewind %s undoes it), but not the conversation: %w", res.To, res.Safety, err)
	}
	r.Resume = plan.Fork.Resume
	return r, nil
}

// Replay implements mcpserver.Workspace.
func (w *Workspace) Replay(ctx context.Context, id string) (mcpserver.RestoreResult, error) {
	return w.restore(ctx, "replay", id)
}

func (w *Workspace) restore(ctx context.Context, op, id string) (mcpserver.RestoreResult, error) {
	_, s, err := w.snapshots(false)
	if err != nil {
		return mcpserver.RestoreResult{}, err
	}
	if s == nil {
		return mcpserver.RestoreResult{}, noCheckpointsYet(id)
	}
	r, _, err := w.restoreIn(ctx, s, op, id)
	return r, err
}

// restoreIn rewinds or replays s to id and maps the result; the store's result too.
func (w *Workspace) restoreIn(ctx context.Context, s *snapshot.Store, op, id string) (mcpserver.RestoreResult, *snapshot.RestoreResult, error) {
	move := s.Rewind
	if op == "replay" {
		move = s.Replay
	}
	res, err := watch.Restored(s, func(hint *snapshot.Changed) (*snapshot.RestoreResult, error) {
		return move(ctx, id, snapshot.RestoreOptions{Changed: hint})
	})
	if err != nil {
		if res != nil && errors.Is(err, snapshot.ErrNotRecorded) {
			return mcpserver.RestoreResult{}, nil, fmt.Errorf("the %s to %s was done (the workspace is now that checkpoint; the state before is checkpoint %s), but it is missing from the hash chain: %w", op, res.To, res.Safety, err)
		}
		return mcpserver.RestoreResult{}, nil, checkpointError(err)
	}
	return restoreResult(res), res, nil
}

// restoreResult maps a snapshot restore to the tool's result: a path that a restore creates is
// added, one it removes is deleted, and any other change (content, mode, type) is modified.
func restoreResult(res *snapshot.RestoreResult) mcpserver.RestoreResult {
	r := mcpserver.RestoreResult{ID: res.To, SafetyID: res.Safety, Paths: make([]string, 0, min(len(res.Changes), mcpserver.MaxPaths))}
	for _, c := range res.Changes {
		switch c.Kind {
		case snapshot.ChangeAdded:
			r.Added++
		case snapshot.ChangeDeleted:
			r.Deleted++
		default:
			r.Modified++
		}
		if len(r.Paths) < mcpserver.MaxPaths {
			r.Paths = append(r.Paths, c.Path)
		} else {
			r.Truncated = true
		}
	}
	for _, k := range res.Kept {
		if k.Live {
			r.InUse = append(r.InUse, k.Path)
		}
	}
	return r
}

// unknownCheckpointError keeps the snapshot store's message and matches both its sentinel and
// mcpserver.ErrUnknownCheckpoint, so the agent is told where ids come from.
type unknownCheckpointError struct{ err error }

func (e *unknownCheckpointError) Error() string { return e.err.Error() }
func (e *unknownCheckpointError) Unwrap() []error {
	return []error{mcpserver.ErrUnknownCheckpoint, e.err}
}

// checkpointError wraps the store's "no such checkpoint" and "ambiguous id" errors.
func checkpointError(err error) error {
	if errors.Is(err, snapshot.ErrNotFound) || errors.Is(err, snapshot.ErrAmbiguous) {
		return &unknownCheckpointError{err}
	}
	return err
}

// noCheckpointsYet is the error for an id in a workspace that has no store yet.
func noCheckpointsYet(id string) error {
	return &unknownCheckpointError{fmt.Errorf("%w: %q: this workspace has no checkpoints yet (call checkpoint first)", snapshot.ErrNotFound, id)}
}
