package conversation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot"
)

// TestCallOf: a call id, the automatic checkpoint before calls (the earliest of those it
// holds the state before), and a checkpoint before no call.
func TestCallOf(t *testing.T) {
	root := t.TempDir()
	s, err := snapshot.Open(root, snapshot.Options{StateDir: filepath.Join(t.TempDir(), "store")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	a, _ := s.AutoCheckpoint(ctx, snapshot.ToolCall{ID: "toolu_a", Tool: "Bash", Session: "s"}, nil)
	s.AutoCheckpoint(ctx, snapshot.ToolCall{ID: "toolu_b", Tool: "Bash", Session: "s"}, nil) // nothing changed: a's reused
	os.WriteFile(filepath.Join(root, "f"), []byte("x"), 0o644)
	mine, _ := s.Checkpoint(ctx, "mine")
	if c, err := CallOf(s, "toolu_b"); err != nil || c.ID != "toolu_b" || c.Checkpoint != a.ID {
		t.Errorf("CallOf(toolu_b) = %+v, %v", c, err)
	}
	if c, err := CallOf(s, a.ID[:6]); err != nil || c.ID != "toolu_a" {
		t.Errorf("CallOf(%s) = %+v, %v; want the earliest call, toolu_a", a.ID[:6], c, err)
	}
	if _, err := CallOf(s, mine.ID); err == nil || !strings.Contains(err.Error(), "before no agent's tool call") {
		t.Errorf("CallOf(a checkpoint of mine): %v", err)
	}
	if _, ok, err := PromptCall(s, filepath.Join(t.TempDir(), "prompts.jsonl"), "prompt:1"); !ok || err == nil || !strings.Contains(err.Error(), "no prompt 1") {
		t.Errorf("prompt:1 without a prompt log: %v, %v", ok, err)
	}
}
