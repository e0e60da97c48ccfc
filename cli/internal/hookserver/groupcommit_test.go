package hookserver

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestGroupCommitSyncsEachFileOnce: files handed to the group commit are synced once each, by
// one timer, and nothing is left pending; a flush syncs at once what is pending.
func TestGroupCommitSyncsEachFileOnce(t *testing.T) {
	var mu sync.Mutex
	synced := map[string]int{}
	done := make(chan struct{}, 8)
	g := &groupCommit{sync: func(p string) error {
		mu.Lock()
		synced[p]++
		mu.Unlock()
		done <- struct{}{}
		return nil
	}}
	g.later("a")
	g.later("b")
	g.later("a")
	for range 2 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the pending files were not synced")
		}
	}
	mu.Lock()
	if synced["a"] != 1 || synced["b"] != 1 || len(synced) != 2 {
		t.Errorf("synced %v, want a and b once each", synced)
	}
	mu.Unlock()
	if g.pending != nil || g.timer != nil {
		t.Errorf("left pending %v, timer %v", g.pending, g.timer)
	}
	g.later("c")
	g.flush()
	select {
	case <-done:
	default:
		t.Fatal("flush did not sync the pending file")
	}
	if commitInterval > 100*time.Millisecond {
		t.Errorf("commitInterval %v: docs/promises.md bounds a power cut's loss at 100 ms", commitInterval)
	}
}

// TestServedNoteIsWrittenBeforeTheAnswer: the note of an automatic checkpoint's call is in
// calls.jsonl when the answer comes, though its fsync is left to the group commit: a killed
// server loses nothing.
func TestServedNoteIsWrittenBeforeTheAnswer(t *testing.T) {
	socket := serve(t, 0)
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(id string) {
		in := `{"session_id":"s","cwd":"` + root + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"` + id + `"}`
		as := ask(t, socket, guardRequest(root, in, "guard", "--checkpoint"))
		if len(as) != 2 || as[1].Code != 0 {
			t.Fatalf("call %s: %d answers, stderr %s", id, len(as), as[len(as)-1].Stderr)
		}
	}
	state := os.Getenv("REWIND_STATE_DIR")
	for _, id := range []string{"toolu_first", "toolu_second"} { // a new checkpoint, then one reused
		call(id)
		calls, err := filepath.Glob(filepath.Join(state, "stores", "*", "calls.jsonl"))
		if err != nil || len(calls) != 1 {
			t.Fatalf("calls logs %v, %v", calls, err)
		}
		b, err := os.ReadFile(calls[0])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`"id":"`+id+`"`)) {
			t.Errorf("calls.jsonl lacks %s when the answer came:\n%s", id, b)
		}
	}
}
