package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CheckpointResult is the output of the checkpoint tool: the new checkpoint and what it holds.
type CheckpointResult struct {
	ID       string    `json:"id"`
	Label    string    `json:"label"`
	Time     time.Time `json:"time"`
	Files    int64     `json:"files"`
	Bytes    int64     `json:"bytes"`
	NewBytes int64     `json:"new_bytes" jsonschema:"newly stored"`
	Skipped  int64     `json:"skipped"`
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
	return textResult(checkpointText(r)), r, nil
}

func checkpointText(r CheckpointResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Checkpoint %s", r.ID)
	if r.Label != "" {
		fmt.Fprintf(&b, " %q", r.Label)
	}
	fmt.Fprintf(&b, " at %s: %d files, %s (%s newly stored", stamp(r.Time), r.Files, humanBytes(r.Bytes), humanBytes(r.NewBytes))
	if r.Skipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", r.Skipped)
	}
	fmt.Fprintf(&b, "). Keep this id: rewind %s restores this state.", r.ID)
	return b.String()
}
