package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxPaths caps the changed paths a rewind or replay reports, so restoring a big tree cannot
// flood the agent's context. The counts are always complete; Truncated reports the cut.
const MaxPaths = 20

// RestoreResult is the output of the rewind and replay tools: what the restore changed, and the
// safety checkpoint of the state it left, which undoes it.
type RestoreResult struct {
	ID        string   `json:"id"`
	SafetyID  string   `json:"safety_id"` // the state the restore left; rewinding to it undoes the restore
	Added     int64    `json:"added"`
	Modified  int64    `json:"modified"`
	Deleted   int64    `json:"deleted"`
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated"`
	InUse     []string `json:"in_use"` // paths in use, left alone (see restoreText)
	// Next says how to undo the restore, and how to finish one that left paths in use; after a
	// rewind with conversation, the command that resumes the forked conversation.
	Next string `json:"next"`
	// Resume is the command that resumes the conversation a rewind forked: the session that
	// called the tool keeps its memory, so the user must run it. Not a member of the result
	// (the context budget): Next carries it.
	Resume string `json:"-"`
}

// idInput is the input of the rewind and replay tools.
type idInput struct {
	ID string `json:"id"`
}

func (s *server) rewind(ctx context.Context, _ *mcp.CallToolRequest, in RewindRequest) (*mcp.CallToolResult, RestoreResult, error) {
	if err := validateRewindRef("id", in.ID); err != nil {
		return nil, RestoreResult{}, err
	}
	r, err := s.ws.Rewind(ctx, in)
	if err != nil {
		return nil, RestoreResult{}, s.toolError(toolRewind, err)
	}
	r = capPaths(r, toolRewind)
	return textResult(restoreText("Rewound", r)), r, nil
}

func (s *server) replay(ctx context.Context, _ *mcp.CallToolRequest, in idInput) (*mcp.CallToolResult, RestoreResult, error) {
	if err := validateRef("id", in.ID); err != nil {
		return nil, RestoreResult{}, err
	}
	r, err := s.ws.Replay(ctx, in.ID)
	if err != nil {
		return nil, RestoreResult{}, s.toolError(toolReplay, err)
	}
	r = capPaths(r, toolReplay)
	return textResult(restoreText("Replayed", r)), r, nil
}

// capPaths keeps at most MaxPaths paths, makes a nil list an empty one (the output schema says
// array, never null), and sets the next step of a restore made by tool.
func capPaths(r RestoreResult, tool string) RestoreResult {
	if len(r.Paths) > MaxPaths {
		r.Paths = r.Paths[:MaxPaths:MaxPaths]
		r.Truncated = true
	}
	if r.Paths == nil {
		r.Paths = []string{}
	}
	if len(r.InUse) > MaxPaths {
		r.InUse = r.InUse[:MaxPaths:MaxPaths]
		r.Truncated = true
	}
	if r.InUse == nil {
		r.InUse = []string{}
	}
	r.Next = restoreNext(r, tool)
	return r
}

// restoreNext is a restore's next step. Undoing names rewind, whichever tool restored: rewind
// goes to any checkpoint, and every profile with a restoring tool has it.
func restoreNext(r RestoreResult, tool string) string {
	var steps []string
	if len(r.InUse) > 0 {
		steps = append(steps, fmt.Sprintf("%s %s again restores in_use once nothing writes to them", tool, r.ID))
	}
	if r.SafetyID != "" {
		steps = append(steps, fmt.Sprintf("rewind %s undoes this", r.SafetyID))
	}
	if r.Resume != "" {
		steps = append(steps, "your conversation was forked to end before it, but this session remembers what came after: tell the user to continue in the fork with: "+r.Resume)
	}
	return strings.Join(steps, "; ")
}

func restoreText(verb string, r RestoreResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s to %s: %d added, %d modified, %d deleted.", verb, r.ID, r.Added, r.Modified, r.Deleted)
	if len(r.Paths) > 0 {
		fmt.Fprintf(&b, " Paths: %s", strings.Join(r.Paths, ", "))
		if r.Truncated {
			b.WriteString(", …")
		}
		b.WriteString(".")
	}
	if len(r.InUse) > 0 {
		fmt.Fprintf(&b, " Left alone because they were in use (being written, or not capturable), so nothing of them was lost: %s.", strings.Join(r.InUse, ", "))
	}
	if r.SafetyID != "" {
		fmt.Fprintf(&b, " The state before is checkpoint %s.", r.SafetyID)
	}
	if r.Next != "" {
		fmt.Fprintf(&b, " Next: %s.", r.Next)
	}
	return b.String()
}
