package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxListEntries caps the entries one call of the list tool returns, so a long history cannot
// flood the agent's context. The newest entries come first; Truncated reports that older ones
// are left, and Next where their page starts.
const MaxListEntries = 50

// MaxListCalls caps the tool calls the list tool returns (the newest).
const MaxListCalls = 20

// ListResult is the output of the list tool: one page of the timeline, newest first.
type ListResult struct {
	Current   string          `json:"current"`
	Entries   []TimelineEntry `json:"entries"`
	Truncated bool            `json:"truncated"`
	// Next is the id to pass as before for the next page; "" on the last page.
	Next string `json:"next"`
	// Calls are the tool calls that had automatic checkpoints, newest first, each with its
	// agent session and the checkpoint holding the workspace as it was before it. They reach the
	// agent in the text, grouped by session, not in the structured result: the context budget
	// (every tool's schema is in the model's context on every turn) has no room for them.
	Calls []CallStep `json:"-"`
}

// CallStep is one tool call an automatic checkpoint was taken before; rewind accepts its id.
type CallStep struct {
	ID         string `json:"id"`
	Session    string `json:"session"`
	Checkpoint string `json:"checkpoint"`
	// Label says what ran (tool: command or path); not in the schema's budget, in the text.
	Label string `json:"-"`
}

// listInput pages through the timeline.
type listInput struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"1-50 (default 50)"`
	Before string `json:"before,omitempty" jsonschema:"the previous page's next"`
}

// TimelineEntry is one checkpoint on the timeline.
type TimelineEntry struct {
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Label  string    `json:"label"`
	Parent string    `json:"parent"`
	// Kind is "checkpoint" for one taken on request, "safety" for one taken automatically
	// before a rewind or replay, "auto" for one an agent's hook took before a tool call.
	Kind    string `json:"kind" jsonschema:"checkpoint, safety or auto"`
	Current bool   `json:"current"`
}

// Kinds of timeline entries.
const (
	KindCheckpoint = "checkpoint"
	KindSafety     = "safety"
	KindAuto       = "auto"
)

func (s *server) list(ctx context.Context, _ *mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, ListResult, error) {
	limit := in.Limit
	switch {
	case limit == 0:
		limit = MaxListEntries
	case limit < 0 || limit > MaxListEntries:
		return nil, ListResult{}, inputError("limit", strconv.Itoa(limit), fmt.Sprintf("give 1 to %d, or leave it out for %d", MaxListEntries, MaxListEntries))
	}
	if in.Before != "" {
		if err := validateID("before", in.Before); err != nil {
			return nil, ListResult{}, err
		}
	}
	r, err := s.ws.List(ctx)
	if err != nil {
		return nil, ListResult{}, s.toolError(toolList, err)
	}
	if in.Before != "" {
		i := slices.IndexFunc(r.Entries, func(e TimelineEntry) bool { return e.ID == in.Before })
		if i < 0 {
			return nil, ListResult{}, inputError("before", in.Before, "no checkpoint has this id: pass the next of the previous page, or leave before out to start at the newest")
		}
		r.Entries = r.Entries[i+1:]
	}
	if len(r.Entries) > limit {
		r.Entries = r.Entries[:limit]
		r.Truncated = true
		r.Next = r.Entries[limit-1].ID
	}
	if r.Entries == nil {
		r.Entries = []TimelineEntry{}
	}
	if len(r.Calls) > MaxListCalls {
		r.Calls = r.Calls[:MaxListCalls]
	}
	if r.Calls == nil {
		r.Calls = []CallStep{}
	}
	return textResult(listText(r)), r, nil
}

func listText(r ListResult) string {
	if len(r.Entries) == 0 {
		return "No checkpoints yet: call checkpoint before risky work."
	}
	var b strings.Builder
	b.WriteString("Timeline, newest first (* = current):")
	for _, e := range r.Entries {
		mark := " "
		if e.Current || e.ID == r.Current {
			mark = "*"
		}
		fmt.Fprintf(&b, "\n%s %s %s %s", mark, e.ID, stamp(e.Time), e.Kind)
		if e.Label != "" {
			fmt.Fprintf(&b, " %q", e.Label)
		}
		if e.Parent != "" {
			fmt.Fprintf(&b, " (parent %s)", e.Parent)
		}
	}
	if r.Truncated {
		fmt.Fprintf(&b, "\n(older entries left: list with before %s for the next page)", r.Next)
	}
	session := "\x00"
	for _, c := range r.Calls {
		if c.Session != session {
			session = c.Session
			fmt.Fprintf(&b, "\nTool calls of session %q, newest first (rewind <tool call id> restores the state before it):", session)
		}
		fmt.Fprintf(&b, "\n- %s", c.ID)
		if c.Label != "" {
			fmt.Fprintf(&b, " %q", c.Label)
		}
		fmt.Fprintf(&b, " (before: %s)", c.Checkpoint)
	}
	return b.String()
}
