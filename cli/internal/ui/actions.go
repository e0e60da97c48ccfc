package ui

import (
	"fmt"
	"net/http"

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
	res, err := s.store.Rewind(r.Context(), req.Checkpoint, snapshot.RestoreOptions{DryRun: req.DryRun})
	if res == nil {
		fail(w, err)
		return
	}
	writeJSON(w, actionResult{Result: res, Error: errText(err)})
}

// actionResult is a restore's or rewind's answer: the store's result, and the error that came
// after it was done (the chain entry failed, say), which the page shows beside it.
type actionResult struct {
	Result any    `json:"result"`
	Error  string `json:"error,omitempty"`
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
