package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRoundTrip is the first use of agent-rewind with nothing but the binary: checkpoint, list,
// change files from Go (no shell), checkpoint, rewind, check and verify the chain. It is the
// end-to-end test that runs on Windows under Wine too (see TestMain: the test binary is the
// binary there), with the guard server off, since Wine has no AF_UNIX sockets.
func TestRoundTrip(t *testing.T) {
	t.Setenv("REWIND_HOOK_SERVER", "off")
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "first\n")
	c1 := jsonOK[cpOut](t, dir, "checkpoint", "first")
	if c1.ID == "" || c1.Counts.Files != 1 {
		t.Fatalf("first checkpoint: %+v", c1)
	}
	write("a.txt", "second\n")
	write(filepath.Join("sub", "b.txt"), "new\n")
	c2 := jsonOK[cpOut](t, dir, "checkpoint", "second")
	if c2.Parent != c1.ID || c2.Counts.Files != 2 {
		t.Fatalf("second checkpoint: %+v; want 2 files after %s", c2, c1.ID)
	}
	if tl := jsonOK[timelineOut](t, dir, "list"); len(tl.Checkpoints) != 2 || tl.Current != c2.ID {
		t.Fatalf("list: %+v", tl)
	}
	r := jsonOK[restoreOut](t, dir, "rewind", c1.ID)
	if len(r.Kept) != 0 {
		t.Fatalf("rewind left paths alone: %+v", r.Kept)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "first\n" {
		t.Fatalf("a.txt after the rewind: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "sub")); !os.IsNotExist(err) {
		t.Fatalf("sub after the rewind: %v; want it gone", err)
	}
	if tl := jsonOK[timelineOut](t, dir, "list"); tl.Current != c1.ID {
		t.Fatalf("list after the rewind: current %s, want %s", tl.Current, c1.ID)
	}
	ok(t, dir, "check")
	if out := ok(t, dir, "chain", "verify").stdout; !strings.Contains(out, "intact") {
		t.Fatalf("chain verify: %s", out)
	}
}
