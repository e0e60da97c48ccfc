package ui

import (
	"testing"

	"github.com/agent-rewind/rewind/snapshot"
)

// TestOrigin: an automatic checkpoint is grouped by its agent session and named by its tool call;
// one someone asked for has neither.
func TestOrigin(t *testing.T) {
	auto := snapshot.Checkpoint{Kind: snapshot.KindAuto, Call: &snapshot.ToolCall{ID: "toolu_1", Tool: "Bash", Session: "s1"}}
	if s, tool := origin(auto); s != "s1" || tool != "Bash toolu_1" {
		t.Fatalf("origin of an automatic checkpoint: %q, %q", s, tool)
	}
	if s, tool := origin(snapshot.Checkpoint{Kind: snapshot.KindNormal}); s != "" || tool != "" {
		t.Fatalf("origin of a manual checkpoint: %q, %q", s, tool)
	}
}
