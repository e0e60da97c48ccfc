package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestorePathsCommand restores one file from an old checkpoint with the real binary: the dry
// run changes nothing, the restore changes that file alone, the position stays, the chain gets a
// "restore" entry, and unsafe paths are refused with the path named.
func TestRestorePathsCommand(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("one\n"), 0o644)
	first := checkpointID(t, ws, "first")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("two\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("two\n"), 0o644)
	second := checkpointID(t, ws, "second")

	r := run(t, ws, "", "restore", first, "--dry-run", "--", "a.txt")
	if r.code != 0 || !strings.Contains(r.stdout, "would change 1 path") || !strings.Contains(r.stdout, "dry run") {
		t.Fatalf("dry run: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two\n" {
		t.Fatalf("dry run changed a.txt: %q", b)
	}
	r = run(t, ws, "", "--json", "restore", first, "--", "./a.txt")
	var out struct {
		Op, From, To, Safety, Undo string
		Paths                      []string
		Changes                    []struct{ Path, Kind string }
		ChainSeq                   int64
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
		t.Fatalf("restore: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if out.Op != "restore" || out.From != second || out.To != first || out.Safety != second || len(out.Changes) != 1 || out.Changes[0].Path != "a.txt" || out.ChainSeq == 0 {
		t.Fatalf("restore result: %+v", out)
	}
	if out.Undo != "agent-rewind restore "+second+" -- a.txt" {
		t.Fatalf("undo: %q", out.Undo)
	}
	a, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
	b, _ := os.ReadFile(filepath.Join(ws, "b.txt"))
	if string(a) != "one\n" || string(b) != "two\n" {
		t.Fatalf("after restore a=%q b=%q", a, b)
	}
	chain := readChain(t, ws)
	if last := chain[len(chain)-1]; last.Kind != "restore" || !strings.Contains(string(last.Data), `"paths":["a.txt"]`) {
		t.Fatalf("last chain entry: %s %s", last.Kind, last.Data)
	}
	r = run(t, ws, "", "--json", "list")
	if !strings.Contains(r.stdout, `"current": "`+second+`"`) {
		t.Fatalf("position moved: %s", r.stdout)
	}
	for _, p := range []string{"../x", filepath.Dir(ws), "."} {
		r = run(t, ws, "", "restore", first, "--", p)
		if r.code != 1 || !strings.Contains(r.stderr, "unsafe path") {
			t.Errorf("restore %q: %d %q", p, r.code, r.stderr)
		}
	}
	r = run(t, ws, "", "restore", first, "--", "missing.txt")
	if r.code != 1 || !strings.Contains(r.stderr, `"missing.txt" is neither in checkpoint`) {
		t.Errorf("missing path: %d %q", r.code, r.stderr)
	}
	// The undo printed puts the file back.
	if r = run(t, ws, "", strings.Fields(out.Undo)[1:]...); r.code != 0 {
		t.Fatalf("undo: %d %q", r.code, r.stderr)
	}
	if a, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(a) != "two\n" {
		t.Fatalf("after undo a=%q", a)
	}
	// A folder, named with a trailing slash as a shell completes it, beside a file.
	os.MkdirAll(filepath.Join(ws, "docs"), 0o755)
	os.WriteFile(filepath.Join(ws, "docs", "x.md"), []byte("one\n"), 0o644)
	third := checkpointID(t, ws, "third")
	os.WriteFile(filepath.Join(ws, "docs", "x.md"), []byte("two\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "docs", "new.md"), []byte("new\n"), 0o644)
	if r = run(t, ws, "", "restore", third, "--", "a.txt", "docs/"); r.code != 0 {
		t.Fatalf("restore a folder: %d %q", r.code, r.stderr)
	}
	x, _ := os.ReadFile(filepath.Join(ws, "docs", "x.md"))
	if _, err := os.Stat(filepath.Join(ws, "docs", "new.md")); string(x) != "one\n" || err == nil {
		t.Fatalf("after restoring docs/: x.md=%q, new.md still there: %v", x, err == nil)
	}
}

// checkpointID takes a checkpoint with the binary and returns its id.
func checkpointID(t *testing.T, ws, label string) string {
	t.Helper()
	r := run(t, ws, "", "--json", "checkpoint", label)
	var out struct{ ID string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.ID == "" {
		t.Fatalf("checkpoint: %d %q %q", r.code, r.stdout, r.stderr)
	}
	return out.ID
}
