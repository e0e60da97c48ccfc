package agentws

import (
	"context"
	"fmt"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/mcpserver"
)

// memory returns the failure memory of ws, logging a torn line it moves aside.
func (w *Workspace) memory(ws *workspace.Workspace) *Memory {
	m := OpenMemory(ws.Meta, ws)
	m.OnRecover = func(t TornTail) {
		fmt.Fprintf(w.log, "agent-rewind: failure memory %s ended in a torn line (%d bytes at offset %d, left by a writer killed mid-write): moved to %s, recorded as chain entry %d\n",
			m.Path(), t.Bytes, t.Offset, t.SavedAs, t.Seq)
	}
	return m
}

// BacktrackCommit implements mcpserver.Workspace. It resolves req.ID first (an unknown id
// records nothing), records the note in failure memory and on the chain, then rewinds to the
// checkpoint as Rewind does. The result holds every note recorded against that checkpoint,
// oldest first, the new one last. If the rewind fails the note stays recorded (it is true) and
// the error says so.
func (w *Workspace) BacktrackCommit(ctx context.Context, req mcpserver.BacktrackRequest) (mcpserver.BacktrackResult, error) {
	ws, s, err := w.snapshots(false)
	if err != nil {
		return mcpserver.BacktrackResult{}, err
	}
	if s == nil {
		return mcpserver.BacktrackResult{}, noCheckpointsYet(req.ID)
	}
	id, err := s.Resolve(req.ID)
	if err != nil {
		return mcpserver.BacktrackResult{}, checkpointError(err)
	}
	note, all, err := w.memory(ws).Add(id, req.WhatFailed, req.Lesson)
	if err != nil {
		return mcpserver.BacktrackResult{}, err
	}
	rw, _, err := w.restoreIn(ctx, s, "rewind", id)
	if err != nil {
		return mcpserver.BacktrackResult{}, fmt.Errorf("the failure note is recorded against %s (chain entry %d), but the rewind there failed: %w", id, note.Seq, err)
	}
	return mcpserver.BacktrackResult{Notes: failureNotes(notesFor(all, id)), Rewind: rw}, nil
}

// notesFor returns the notes recorded against checkpoint id, in their order.
func notesFor(notes []Note, id string) []Note {
	var out []Note
	for _, n := range notes {
		if n.Checkpoint == id {
			out = append(out, n)
		}
	}
	return out
}

// failureNotes maps notes to the tool's shape, never nil.
func failureNotes(notes []Note) []mcpserver.FailureNote {
	out := make([]mcpserver.FailureNote, 0, len(notes))
	for _, n := range notes {
		out = append(out, mcpserver.FailureNote{Time: n.Time, WhatFailed: n.WhatFailed, Lesson: n.Lesson})
	}
	return out
}
