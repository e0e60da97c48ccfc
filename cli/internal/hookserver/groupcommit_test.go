package hookserver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		in := `{"session_id":"s","cwd":` + jsonString(root) + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"` + id + `"}`
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

// TestGroupCommitRunsTheNewestFlushPerKey: of the flushes handed over under one key, only the
// newest runs; other keys and files are flushed beside it.
func TestGroupCommitRunsTheNewestFlushPerKey(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	run := func(name string) func() error {
		return func() error {
			mu.Lock()
			ran = append(ran, name)
			mu.Unlock()
			return nil
		}
	}
	g := &groupCommit{sync: func(p string) error { return run("sync " + p)() }}
	g.laterFunc("chain", run("head 1"))
	g.later("calls.jsonl")
	g.laterFunc("chain", run("head 2"))
	g.laterFunc("other chain", run("other head"))
	g.flush()
	slices.Sort(ran)
	if want := []string{"head 2", "other head", "sync calls.jsonl"}; !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
}

// TestServedChangedCallAnchorsWithinTheBound: a served call that checkpoints a change has its
// chain entry on the chain when the answer comes, and the anchor reaches the chain's head by
// the group commit, without another call.
func TestServedChangedCallAnchorsWithinTheBound(t *testing.T) {
	socket := serve(t, 0)
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := os.Getenv("REWIND_STATE_DIR")
	for i, id := range []string{"toolu_first", "toolu_changed"} {
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(id), 0o644); err != nil {
			t.Fatal(err)
		}
		in := `{"session_id":"s","cwd":` + jsonString(root) + `,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"` + id + `"}`
		if as := ask(t, socket, guardRequest(root, in, "guard", "--checkpoint")); len(as) != 2 || as[1].Code != 0 {
			t.Fatalf("call %s: %d answers, stderr %s", id, len(as), as[len(as)-1].Stderr)
		}
		chains, err := filepath.Glob(filepath.Join(state, "stores", "*", "chain.jsonl"))
		if err != nil || len(chains) != 1 {
			t.Fatalf("chains %v, %v", chains, err)
		}
		b, err := os.ReadFile(chains[0])
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte(`"kind":"checkpoint"`)); n != i+1 {
			t.Fatalf("after call %s the chain holds %d checkpoint entries, want %d:\n%s", id, n, i+1, b)
		}
		size := fmt.Sprintf("\n%d\n", bytes.Count(b, []byte("\n")))
		deadline := time.Now().Add(10 * time.Second)
		for {
			var a []byte
			anchors, _ := filepath.Glob(filepath.Join(state, "anchors", "*", "head"))
			if len(anchors) == 1 {
				if a, err = os.ReadFile(anchors[0]); err == nil && bytes.Contains(a, []byte(size)) {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("anchors %v hold %q, not the head of the chain's %s entries", anchors, a, strings.TrimSpace(size))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
