package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CheckpointResult is the output of the checkpoint tool: the new checkpoint, the folder it holds
// and how much of it.
type CheckpointResult struct {
	ID    string    `json:"id"`
	Label string    `json:"label"`
	Time  time.Time `json:"time"`
	// Workspace is the folder checkpointed: the project the session protects, which may be
	// above the folder the agent was started in (docs/agents.md, "Which folder: the rules").
	Workspace string `json:"workspace"`
	Files     int64  `json:"files"`
	Bytes     int64  `json:"bytes"`
	Skipped   int64  `json:"skipped"` // paths not captured (unreadable, or not a file, folder or symlink)
	// Next says how to come back to this state: the id is the thing to keep.
	Next string `json:"next"`
}

// checkpointInput is the checkpoint tool's input.
type checkpointInput struct {
	Label string `json:"label,omitempty" jsonschema:"What you are about to try"`
}

func (s *server) checkpoint(ctx context.Context, _ *mcp.CallToolRequest, in checkpointInput) (*mcp.CallToolResult, CheckpointResult, error) {
	if err := validateLabel(in.Label); err != nil {
		return nil, CheckpointResult{}, err
	}
	r, err := s.ws.Checkpoint(ctx, in.Label)
	if err != nil {
		return nil, CheckpointResult{}, s.toolError(toolCheckpoint, err)
	}
	r.Next = fmt.Sprintf("rewind %s restores this state", r.ID)
	return textResult(checkpointText(r)), r, nil
}

func checkpointText(r CheckpointResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Checkpoint %s", r.ID)
	if r.Label != "" {
		fmt.Fprintf(&b, " %q", r.Label)
	}
	fmt.Fprintf(&b, " of %s at %s: %d files, %s", r.Workspace, stamp(r.Time), r.Files, humanBytes(r.Bytes))
	if r.Skipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", r.Skipped)
	}
	fmt.Fprintf(&b, ". Keep this id: %s.", r.Next)
	return b.String()
}
