package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// hookState is what "list --json" says after a hook: the position, and the checkpoint the last
// tool call was noted against with its manifest.
type hookState struct {
	Current     string `json:"current"`
	Checkpoints []struct {
		ID       string `json:"id"`
		Manifest string `json:"manifest"`
	} `json:"checkpoints"`
	Sessions []struct {
		Calls []struct {
			ID         string `json:"id"`
			Checkpoint string `json:"checkpoint"`
			Reused     bool   `json:"reused"`
		} `json:"calls"`
	} `json:"sessions"`
}

func hookList(t *testing.T, ws string) hookState {
	t.Helper()
	r := run(t, ws, "", "--workspace", ws, "--json", "list")
	var st hookState
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("list --json: %+v", r)
	}
	return st
}

// manifestOf returns the manifest of checkpoint id.
func (st hookState) manifestOf(t *testing.T, id string) string {
	t.Helper()
	for _, c := range st.Checkpoints {
		if c.ID == id {
			return c.Manifest
		}
	}
	t.Fatalf("checkpoint %s not listed", id)
	return ""
}

// TestHookWithWatcher: the hook before a tool call (guard --checkpoint) with the watcher
// running. An unchanged workspace reuses the position and writes neither a checkpoint nor the
// watcher's position; and the reuse is never stale: a change made just before the hook, a
// watcher killed and restarted, and a rewind since the token each give the checkpoint a full
// walk gives.
func TestHookWithWatcher(t *testing.T) {
	needWatcher(t)
	t.Setenv("REWIND_WATCH", "on")
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "src", "main.go"), "v1")
	writeFile(t, filepath.Join(ws, "README"), "hello")
	t.Cleanup(func() { run(t, ws, "", "watch", "stop") })
	checkpointJSON(t, ws) // starts the watcher
	checkpointJSON(t, ws) // takes its first token
	calls := 0
	hook := func() hookState {
		t.Helper()
		calls++
		id := "toolu_w" + string(rune('a'+calls))
		if r := preToolUse(t, ws, bashHook(t, "PreToolUse", "make", id)); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("hook %s: %+v", id, r)
		}
		st := hookList(t, ws)
		calls := st.Sessions[len(st.Sessions)-1].Calls
		if last := calls[len(calls)-1]; last.ID != id || last.Checkpoint != st.Current {
			t.Fatalf("hook %s: last call %+v, current %s", id, last, st.Current)
		}
		return st
	}
	// fullWalk is the manifest a full walk gives now.
	fullWalk := func() string {
		t.Helper()
		t.Setenv("REWIND_WATCH", "off")
		defer t.Setenv("REWIND_WATCH", "on")
		return checkpointJSON(t, ws).Manifest
	}

	before := hookList(t, ws)
	position := filepath.Join(stateDir(t, ws), "watch", "position")
	posBefore, err := os.Stat(position)
	if err != nil {
		t.Fatal(err)
	}
	st := hook()
	if st.Current != before.Current || len(st.Checkpoints) != len(before.Checkpoints) {
		t.Fatalf("unchanged workspace: position %s -> %s, %d -> %d checkpoints: want the position reused",
			before.Current, st.Current, len(before.Checkpoints), len(st.Checkpoints))
	}
	if posAfter, err := os.Stat(position); err != nil || !os.SameFile(posBefore, posAfter) {
		t.Fatalf("unchanged workspace: the watcher's position was written again (%v)", err)
	}

	// A change made just before the hook.
	writeFile(t, filepath.Join(ws, "src", "main.go"), "v2")
	st = hook()
	if st.Current == before.Current {
		t.Fatal("a change made just before the hook: the stale position was reused")
	}
	changed := st.Current
	if got, want := st.manifestOf(t, changed), fullWalk(); got != want {
		t.Fatalf("after a change: the hook's manifest %s, a full walk's %s", got, want)
	}

	// The watcher killed, a change, a new watcher: the token is from the old one.
	pid := watchStatusJSON(t, ws).PID
	if err := killPID(pid); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	writeFile(t, filepath.Join(ws, "README"), "changed while no watcher ran")
	checkpointJSON(t, ws) // starts a new watcher (and walks)
	writeFile(t, filepath.Join(ws, "src", "new.go"), "new")
	st = hook()
	if got, want := st.manifestOf(t, st.Current), fullWalk(); got != want {
		t.Fatalf("after a watcher restart: the hook's manifest %s, a full walk's %s", got, want)
	}

	// A rewind since the token: the hook checkpoints the rewound workspace, never the position
	// the token was saved with.
	if r := run(t, ws, "", "--workspace", ws, "rewind", changed); r.code != 0 {
		t.Fatalf("rewind: %+v", r)
	}
	rewound := hookList(t, ws).Current
	st = hook()
	if got, want := st.manifestOf(t, st.Current), st.manifestOf(t, changed); st.Current != rewound || got != want {
		t.Fatalf("after a rewind to %s: the hook's position %s (manifest %s), want %s (manifest %s)", changed, st.Current, got, rewound, want)
	}
	if got, want := st.manifestOf(t, st.Current), fullWalk(); got != want {
		t.Fatalf("after a rewind: the hook's manifest %s, a full walk's %s", got, want)
	}
	verifyChain(t, ws)
}
