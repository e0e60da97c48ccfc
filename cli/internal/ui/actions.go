package ui

import (
	"fmt"
	"net/http"

	"github.com/agent-rewind/rewind/cli/internal/conversation"
	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/cli/internal/transcript"
	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/snapshot"
)

// RestoreRequest is the body of api/restore: restore Paths from Checkpoint; with DryRun, only
// say what would change. The page always asks for the dry run first and shows it.
type RestoreRequest struct {
	Checkpoint string   `json:"checkpoint"`
	Paths      []string `json:"paths"`
	DryRun     bool     `json:"dryRun"`
}

func (s *Server) restore(w http.ResponseWriter, r *http.Request) {
	var req RestoreRequest
	if err := readBody(r, &req); err != nil {
		fail(w, err)
		return
	}
	if req.Checkpoint == "" {
		fail(w, fmt.Errorf("%w: the request names no checkpoint to restore from (\"checkpoint\": its id)", errBadRequest))
		return
	}
	if len(req.Paths) == 0 {
		fail(w, fmt.Errorf("%w: choose at least one file or folder to restore", errBadRequest))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.store.RestorePaths(r.Context(), req.Checkpoint, req.Paths, snapshot.RestoreOptions{DryRun: req.DryRun})
	if res == nil {
		fail(w, err)
		return
	}
	writeJSON(w, actionResult{Result: res, Error: errText(err)})
}

// RewindRequest is the body of api/rewind.
type RewindRequest struct {
	Checkpoint string `json:"checkpoint"`
	DryRun     bool   `json:"dryRun"`
	// Conversation: also fork the agent session's conversation to end before the tool call the
	// checkpoint was taken before (rewind --conversation).
	Conversation bool `json:"conversation"`
}

func (s *Server) rewind(w http.ResponseWriter, r *http.Request) {
	var req RewindRequest
	if err := readBody(r, &req); err != nil {
		fail(w, err)
		return
	}
	if req.Checkpoint == "" {
		fail(w, fmt.Errorf("%w: the request names no checkpoint to rewind to (\"checkpoint\": its id)", errBadRequest))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Conversation {
		s.rewindConversation(w, r, req)
		return
	}
	res, err := watch.Restored(s.store, func(hint *snapshot.Changed) (*snapshot.RestoreResult, error) {
		return s.store.Rewind(r.Context(), req.Checkpoint, snapshot.RestoreOptions{DryRun: req.DryRun, Changed: hint})
	})
	if res == nil {
		fail(w, err)
		return
	}
	writeJSON(w, actionResult{Result: res, Error: errText(err)})
}

// rewindConversation is api/rewind with conversation: the fork planned first (a transcript
// that cannot be forked rewinds nothing), then the files, then the fork written and recorded.
func (s *Server) rewindConversation(w http.ResponseWriter, r *http.Request, req RewindRequest) {
	where, err := transcript.FromEnv()
	if err != nil {
		fail(w, err)
		return
	}
	plan, err := conversation.Plan(s.store, s.ws.Path(prompts.File), where, req.Checkpoint)
	if err != nil {
		fail(w, fmt.Errorf("%w; nothing was rewound, neither files nor conversation", err))
		return
	}
	res, err := watch.Restored(s.store, func(hint *snapshot.Changed) (*snapshot.RestoreResult, error) {
		return s.store.Rewind(r.Context(), plan.Call.Checkpoint, snapshot.RestoreOptions{DryRun: req.DryRun, Changed: hint})
	})
	if res == nil {
		fail(w, err)
		return
	}
	conv := &conversationResult{Fork: plan.Fork}
	if !req.DryRun && err == nil {
		conv.Written, _, err = plan.Commit(s.ws, res.OpID, res.To)
	}
	writeJSON(w, actionResult{Result: res, Conversation: conv, Error: errText(err)})
}

// conversationResult is the conversation half of a rewind: the fork (what goes back; in a dry
// run its session id and resume command are not yet in use), and whether it was written.
type conversationResult struct {
	*transcript.Fork
	Written bool `json:"written"`
}

// actionResult is a restore's or rewind's answer: the store's result, and the error that came
// after it was done (the chain entry failed, say), which the page shows beside it.
type actionResult struct {
	Result       any                 `json:"result"`
	Conversation *conversationResult `json:"conversation,omitempty"` // rewind with conversation
	Error        string              `json:"error,omitempty"`
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
