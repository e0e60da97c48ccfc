package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A long history is listed a page at a time: --limit keeps the newest, next names where the
// following page starts, and --before that id gives it.
func TestListPages(t *testing.T) {
	dir := t.TempDir()
	var ids []string // oldest first
	for i := range 5 {
		os.WriteFile(filepath.Join(dir, "f"), []byte(fmt.Sprint(i)), 0o644)
		ids = append(ids, jsonOK[cpOut](t, dir, "checkpoint", fmt.Sprint("cp", i)).ID)
	}
	type pageOut struct {
		timelineOut
		Next string
	}
	var got []string
	next := ""
	for range 3 {
		args := []string{"list", "--limit", "2"}
		if next != "" {
			args = append(args, "--before", next)
		}
		p := jsonOK[pageOut](t, dir, args...)
		if p.Current != ids[4] {
			t.Fatalf("page current %q, want the workspace's position %s", p.Current, ids[4])
		}
		for i := len(p.Checkpoints) - 1; i >= 0; i-- {
			got = append(got, p.Checkpoints[i].ID)
		}
		next = p.Next
		if next == "" {
			break
		}
	}
	want := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if strings.Join(got, " ") != strings.Join(want, " ") || next != "" {
		t.Fatalf("pages listed %v (next %q), want %v", got, next, want)
	}

	text := ok(t, dir, "list", "--limit", "2").stdout
	if !strings.Contains(text, "older checkpoints not shown: agent-rewind list --before "+ids[3]+" --limit 2") || strings.Contains(text, "cp2\n") {
		t.Fatalf("list --limit 2 printed:\n%s", text)
	}
	graph := ok(t, dir, "list", "--graph", "--limit", "2").stdout
	if !strings.Contains(graph, "parent "+ids[2]+" on an older page") {
		t.Fatalf("list --graph --limit 2 printed:\n%s", graph)
	}
	if r := run(t, dir, "", "list", "--limit=-1"); r.code != 1 || !strings.Contains(r.stderr, "--limit -1") {
		t.Fatalf("list --limit=-1: exit %d, stderr %q", r.code, r.stderr)
	}
}

// After a rewind to the checkpoint the workspace had drifted from, list names the safety
// checkpoint and the target, instead of "from X to X".
func TestListAfterRewindToDriftedFrom(t *testing.T) {
	// One of the package's slowest (each process a -race binary): run beside the others' tail.
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("a"), 0o644)
	a := jsonOK[cpOut](t, dir, "checkpoint", "a").ID
	os.WriteFile(filepath.Join(dir, "f"), []byte("drifted"), 0o644)
	rw := jsonOK[restoreOut](t, dir, "rewind", a)
	text := ok(t, dir, "list").stdout
	if strings.Contains(text, "from "+a+" to "+a) || !strings.Contains(text, "back to "+a) || !strings.Contains(text, "safety checkpoint "+rw.Safety) {
		t.Fatalf("list after the rewind printed:\n%s", text)
	}
}
