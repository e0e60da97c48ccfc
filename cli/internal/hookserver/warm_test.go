package hookserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// TestPromptWarmsUp: a served prompt hook (Claude Code's UserPromptSubmit) of a workspace with
// no checkpoint yet has the server take its first checkpoint after the answer, with the change
// watcher started first; the session's first tool call then reuses that checkpoint (nothing to
// read: the watcher's hint), noted under its own id.
func TestPromptWarmsUp(t *testing.T) {
	socket := serveWatched(t, 0)
	state := os.Getenv("REWIND_STATE_DIR")
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(root, "f"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+".txt"), []byte("content"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prompt := `{"session_id":"s1","cwd":` + jsonString(root) + `,"hook_event_name":"UserPromptSubmit","prompt":"add a login page"}`
	as := ask(t, socket, guardRequest(root, prompt, "guard"))
	if len(as) != 2 || as[1].Code != 0 || len(as[1].Stdout) != 0 {
		t.Fatalf("the prompt hook: %d answers, last %+v", len(as), as[len(as)-1])
	}
	// The first checkpoint comes after the answer: wait for it.
	var cps []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		cps, _ = filepath.Glob(filepath.Join(state, "stores", "*", "checkpoints", "*"))
		if len(cps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no first checkpoint after the prompt")
		}
	}
	b, err := os.ReadFile(cps[0])
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Label, Kind string }
	if err := json.Unmarshal(b, &meta); err != nil || meta.Label != hook.WarmLabel {
		t.Fatalf("the first checkpoint: %s (%v), want the label %q", b, err, hook.WarmLabel)
	}
	pre := `{"session_id":"s1","cwd":` + jsonString(root) + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_first"}`
	if as := ask(t, socket, guardRequest(root, pre, "guard", "--checkpoint")); len(as) != 2 || as[1].Code != 0 {
		t.Fatalf("the first tool call: %+v", as)
	}
	calls, _ := filepath.Glob(filepath.Join(state, "stores", "*", "calls.jsonl"))
	if len(calls) != 1 {
		t.Fatalf("calls logs: %v", calls)
	}
	log, err := os.ReadFile(calls[0])
	if err != nil {
		t.Fatal(err)
	}
	id := filepath.Base(cps[0])
	if !bytes.Contains(log, []byte(`"id":"toolu_first"`)) || !bytes.Contains(log, []byte(`"checkpoint":"`+id+`","reused":true`)) {
		t.Errorf("the first tool call was not noted against the warm-up's checkpoint %s:\n%s", id, log)
	}
	if cps, _ := filepath.Glob(filepath.Join(state, "stores", "*", "checkpoints", "*")); len(cps) != 1 {
		t.Errorf("%d checkpoints, want the warm-up's alone: %v", len(cps), cps)
	}
}

// TestPromptAdoptsThePosition: a store whose position was taken without the change watcher (a
// new server, a checkpoint by hand) has the watcher vouch for it after a prompt, once the
// workspace is found equal to it, so the session's first tool call takes the watcher's hint
// and writes nothing.
func TestPromptAdoptsThePosition(t *testing.T) {
	if why := watch.Off(); why != "" {
		t.Skipf("checkpoints use no change watcher here (%s): nothing vouches for the position", why)
	}
	socket := serveWatched(t, 0)
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Init(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ws.Snapshots(nil)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.Checkpoint(context.Background(), "by hand")
	if err != nil {
		t.Fatal(err)
	}
	meta := ws.Meta
	ws.Close()
	if p := watch.ReadPosition(meta); p.Checkpoint != "" {
		t.Fatalf("a watch position before any watcher: %+v", p)
	}
	prompt := `{"session_id":"s1","cwd":` + jsonString(root) + `,"hook_event_name":"UserPromptSubmit","prompt":"go on"}`
	if as := ask(t, socket, guardRequest(root, prompt, "guard")); len(as) != 2 || as[1].Code != 0 {
		t.Fatalf("the prompt hook: %+v", as)
	}
	for deadline := time.Now().Add(30 * time.Second); watch.ReadPosition(meta).Checkpoint != cp.ID; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the watcher never vouched for %s: %+v", cp.ID, watch.ReadPosition(meta))
		}
	}
	pre := `{"session_id":"s1","cwd":` + jsonString(root) + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_next"}`
	if as := ask(t, socket, guardRequest(root, pre, "guard", "--checkpoint")); len(as) != 2 || as[1].Code != 0 {
		t.Fatalf("the tool call: %+v", as)
	}
	log, err := os.ReadFile(filepath.Join(meta, "calls.jsonl"))
	if err != nil || !bytes.Contains(log, []byte(`"id":"toolu_next"`)) || !bytes.Contains(log, []byte(`"checkpoint":"`+cp.ID+`","reused":true`)) {
		t.Errorf("the tool call was not noted against %s, reused (%v):\n%s", cp.ID, err, log)
	}
}
