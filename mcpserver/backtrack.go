package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Caps on what the backtrack tools return, so failure memory cannot flood the agent's context.
const (
	// MaxCandidates is how many candidates backtrack_candidates returns (the most promising).
	MaxCandidates = 10
	// MaxCandidateNotes is how many notes each candidate carries (the newest).
	MaxCandidateNotes = 5
	// MaxCommitNotes is how many notes backtrack_commit returns for its checkpoint (the newest).
	MaxCommitNotes = 20
)

// FailureNote is one entry of failure memory: what failed after a checkpoint, and the lesson.
// Failure memory lives under .rewind/ and survives rewinds.
type FailureNote struct {
	Time       time.Time `json:"time"`
	WhatFailed string    `json:"what_failed"`
	Lesson     string    `json:"lesson"`
}

// CandidatesResult is the output of backtrack_candidates: checkpoints worth going back to,
// most promising first.
type CandidatesResult struct {
	Candidates []Candidate `json:"candidates"`
	Truncated  bool        `json:"truncated"`
}

// Candidate is one checkpoint worth going back to.
type Candidate struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// Time is when the checkpoint was taken; the result gives AgeSeconds instead, which is what
	// an agent weighs.
	Time time.Time `json:"-"`
	// AgeSeconds is set by mcpserver from Time when the call is answered; a Workspace leaves it.
	AgeSeconds int64 `json:"age_seconds"`
	// Changed is how many paths differ between the checkpoint and the workspace now.
	Changed int64 `json:"changed"`
	// Notes are the failure notes recorded against this checkpoint, oldest first.
	Notes []FailureNote `json:"notes"`
	// ToolCall is, for an automatic checkpoint, the id of the call it was taken before.
	ToolCall string `json:"call"`
}

// BacktrackResult is the output of backtrack_commit: every note now recorded for the
// checkpoint (the new one last), and the rewind to it.
type BacktrackResult struct {
	Notes  []FailureNote `json:"notes"`
	Rewind RestoreResult `json:"rewind"`
}

func (s *server) backtrackCandidates(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, CandidatesResult, error) {
	r, err := s.ws.BacktrackCandidates(ctx)
	if err != nil {
		return nil, CandidatesResult{}, s.toolError(toolBacktrackCandidates, err)
	}
	if len(r.Candidates) > MaxCandidates {
		r.Candidates = r.Candidates[:MaxCandidates:MaxCandidates]
		r.Truncated = true
	}
	if r.Candidates == nil {
		r.Candidates = []Candidate{}
	}
	now := s.now()
	for i := range r.Candidates {
		c := &r.Candidates[i]
		c.AgeSeconds = max(0, int64(now.Sub(c.Time)/time.Second))
		c.Notes = newestNotes(c.Notes, MaxCandidateNotes)
	}
	return textResult(candidatesText(r)), r, nil
}

func (s *server) backtrackCommit(ctx context.Context, _ *mcp.CallToolRequest, in BacktrackRequest) (*mcp.CallToolResult, BacktrackResult, error) {
	if err := validateBacktrack(in); err != nil {
		return nil, BacktrackResult{}, err
	}
	r, err := s.ws.BacktrackCommit(ctx, in)
	if err != nil {
		return nil, BacktrackResult{}, s.toolError(toolBacktrackCommit, err)
	}
	r.Notes = newestNotes(r.Notes, MaxCommitNotes)
	r.Rewind = capPaths(r.Rewind, toolRewind)
	return textResult(commitText(in.ID, r)), r, nil
}

// newestNotes keeps the last n notes (the list is oldest first) and never returns nil.
func newestNotes(notes []FailureNote, n int) []FailureNote {
	if len(notes) > n {
		notes = notes[len(notes)-n:]
	}
	if notes == nil {
		notes = []FailureNote{}
	}
	return notes
}

func candidatesText(r CandidatesResult) string {
	if len(r.Candidates) == 0 {
		return "No checkpoints to go back to: call checkpoint before risky work."
	}
	var b strings.Builder
	b.WriteString("Backtrack candidates, most promising first:")
	for _, c := range r.Candidates {
		fmt.Fprintf(&b, "\n- %s", c.ID)
		if c.Label != "" {
			fmt.Fprintf(&b, " %q", c.Label)
		}
		if c.ToolCall != "" {
			fmt.Fprintf(&b, " (before tool call %s)", c.ToolCall)
		}
		fmt.Fprintf(&b, ", %s ago, %d paths changed since", time.Duration(c.AgeSeconds)*time.Second, c.Changed)
		writeNotes(&b, "  ", c.Notes)
	}
	if r.Truncated {
		b.WriteString("\n(more candidates omitted)")
	}
	b.WriteString("\nNext: backtrack_commit with a candidate's id and what_failed goes back there.")
	return b.String()
}

func commitText(id string, r BacktrackResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Recorded the failure against %s (%d notes there now). ", id, len(r.Notes))
	b.WriteString(restoreText("Rewound", r.Rewind))
	b.WriteString(" Do not repeat these:")
	writeNotes(&b, "", r.Notes)
	return b.String()
}

func writeNotes(b *strings.Builder, indent string, notes []FailureNote) {
	for _, n := range notes {
		fmt.Fprintf(b, "\n%s  failed: %s", indent, n.WhatFailed)
		if n.Lesson != "" {
			fmt.Fprintf(b, "; lesson: %s", n.Lesson)
		}
	}
}
