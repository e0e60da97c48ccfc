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

// ListResult is the output of the list tool: one page of the timeline, newest first, and the
// tool calls an agent's hooks took automatic checkpoints before, by session. Clients hand the
// model this structured result, not the text (Claude Code, Codex CLI), so everything an agent
// needs to go back is in it.
type ListResult struct {
	Current string          `json:"current"`
	Entries []TimelineEntry `json:"entries"`
	// Truncated reports that something was left out: older entries (Older says where they
	// start) or, on the first page, tool calls beyond the newest MaxListCalls.
	Truncated bool `json:"truncated"`
	// Older is the id to pass as before for the next, older page; "" on the last page.
	Older string `json:"older"`
	// Sessions are the agent sessions whose tool calls had automatic checkpoints, the session
	// with the newest call first, each with its calls newest first: on the first page only
	// (before not given), at most MaxListCalls calls in all.
	Sessions []Session `json:"sessions"`
	// Next says how to go back, in words the agent acts on.
	Next string `json:"next"`
	// Calls is the Workspace's side: every tool call that had an automatic checkpoint, newest
	// first. The tool answers with them grouped, as Sessions.
	Calls []CallStep `json:"-"`
}

// Session is one agent session's tool calls, newest first.
type Session struct {
	ID    string     `json:"id"` // the agent's session id, "" when its hooks named none
	Calls []CallStep `json:"calls"`
}

// CallStep is one tool call an automatic checkpoint was taken before; rewind accepts its id.
type CallStep struct {
	ID string `json:"id"`
	// Label says what ran: the tool, and its command or path ("Bash: npm install").
	Label string `json:"label"`
	// Checkpoint holds the workspace as it was before the call.
	Checkpoint string `json:"before"`
	// Prompt is the person's prompt that led to the call, where the client's prompt hook logged
	// it (redacted, shortened), after the ref rewind takes for the state before its first call:
	// "prompt:3 Add a login page". People think in prompts, not tool calls.
	Prompt string `json:"prompt"` // "" where none was logged
	// Session is the agent session the call belongs to; in the result, the Session it is in.
	Session string `json:"-"`
}

// listInput pages through the timeline.
type listInput struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"max 50"`
	Before string `json:"before,omitempty"` // a page's older: the next page
}

// TimelineEntry is one checkpoint on the timeline.
type TimelineEntry struct {
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Label  string    `json:"label"`
	Parent string    `json:"parent"`
	// Kind is "checkpoint" for one taken on request, "safety" for one taken automatically
	// before a rewind or replay, "auto" for one an agent's hook took before a tool call.
	Kind string `json:"kind"`
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
			return nil, ListResult{}, inputError("before", in.Before, "no checkpoint has this id: pass the older of the previous page, or leave before out to start at the newest")
		}
		r.Entries = r.Entries[i+1:]
	}
	if len(r.Entries) > limit {
		r.Entries = r.Entries[:limit]
		r.Truncated = true
		r.Older = r.Entries[limit-1].ID
	}
	if r.Entries == nil {
		r.Entries = []TimelineEntry{}
	}
	calls := r.Calls
	if in.Before != "" {
		calls = nil // the first page has them; a later one repeats none
	} else if len(calls) > MaxListCalls {
		calls, r.Truncated = calls[:MaxListCalls], true
	}
	r.Sessions, r.Calls = bySession(calls), nil
	r.Next = listNext(r)
	return textResult(listText(r)), r, nil
}

// bySession groups calls (newest first) by session: the session of the newest call first, each
// session's calls in their order. It never returns nil.
func bySession(calls []CallStep) []Session {
	out := []Session{}
	at := map[string]int{}
	for _, c := range calls {
		i, ok := at[c.Session]
		if !ok {
			i = len(out)
			at[c.Session] = i
			out = append(out, Session{ID: c.Session, Calls: []CallStep{}})
		}
		out[i].Calls = append(out[i].Calls, c)
	}
	return out
}

// listNext is the list result's next step.
func listNext(r ListResult) string {
	if len(r.Entries) == 0 {
		return "call checkpoint before risky work"
	}
	next := "rewind with an entry's id restores that checkpoint"
	if len(r.Sessions) > 0 {
		next += ", with a call's id the state before that tool call"
	}
	if slices.ContainsFunc(r.Sessions, func(s Session) bool {
		return slices.ContainsFunc(s.Calls, func(c CallStep) bool { return c.Prompt != "" })
	}) {
		next += ", with a prompt's prompt:N the state before that prompt's calls"
	}
	if r.Older != "" {
		next += "; list with before " + r.Older + " shows older entries"
	}
	return next
}

func listText(r ListResult) string {
	if len(r.Entries) == 0 {
		return "No checkpoints yet: call checkpoint before risky work."
	}
	var b strings.Builder
	b.WriteString("Timeline, newest first (* = current):")
	for _, e := range r.Entries {
		mark := " "
		if e.ID == r.Current {
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
	for _, s := range r.Sessions {
		fmt.Fprintf(&b, "\nTool calls of session %q, newest first:", s.ID)
		for _, c := range s.Calls {
			fmt.Fprintf(&b, "\n- %s", c.ID)
			if c.Label != "" {
				fmt.Fprintf(&b, " %q", c.Label)
			}
			fmt.Fprintf(&b, " (before: %s)", c.Checkpoint)
			if c.Prompt != "" {
				fmt.Fprintf(&b, " for %q", c.Prompt)
			}
		}
	}
	if r.Truncated {
		b.WriteString("\n(older entries or tool calls left out)")
	}
	fmt.Fprintf(&b, "\nNext: %s.", r.Next)
	return b.String()
}
