package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The promises a rewind keeps at the edges, end to end: paths in use are never changed (a file
// being written, a socket), hard links never carry a change outside the workspace, and a target
// that cannot be read is undone, never left half restored.

// keptOut is a "kept" member of rewind --json.
type keptOut struct {
	Path, Reason string
	Live         bool
}

// TestRewindKeepsFileBeingWritten is the repro with the real binary: a file appended to
// while `rewind` runs is left as it is (its new data was never checkpointed), reported in
// "kept" with "live": true and a "retry" command, and the rest of the rewind is done. Once the
// writer stops, the retry command, run as printed, restores the target's version.
func TestRewindKeepsFileBeingWritten(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "grow.bin")
	first := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
	os.WriteFile(name, first, 0o644)
	os.WriteFile(filepath.Join(dir, "s.txt"), []byte("stable\n"), 0o644)
	c1 := jsonOK[cpOut](t, dir, "checkpoint", "C1")
	os.WriteFile(filepath.Join(dir, "s.txt"), []byte("edited\n"), 0o644)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")
	var stop atomic.Bool
	var lines atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer f.Close()
		for !stop.Load() {
			f.WriteString("line\n")
			lines.Add(1)
			time.Sleep(200 * time.Microsecond)
		}
	}()
	time.Sleep(100 * time.Millisecond)
	r := run(t, dir, "", "--json", "rewind", c1.ID)
	stop.Store(true)
	wg.Wait()
	if r.code != 0 {
		t.Fatalf("rewind: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	out := decode[struct {
		To, Retry string
		Kept      []keptOut
		Changes   []changeOut
	}](t, r)
	want := append(append(bytes.Clone(first), "more\n"...), bytes.Repeat([]byte("line\n"), int(lines.Load()))...)
	if got, _ := os.ReadFile(name); !bytes.Equal(got, want) {
		t.Fatalf("the rewind changed the file being written: %d bytes, want %d", len(got), len(want))
	}
	live := false
	for _, k := range out.Kept {
		live = live || (k.Path == "grow.bin" && k.Live && k.Reason != "")
	}
	if !live || out.Retry != "agent-rewind rewind "+c1.ID {
		t.Fatalf("kept %+v, retry %q", out.Kept, out.Retry)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "s.txt")); string(got) != "stable\n" {
		t.Fatalf("the rest of the rewind was not done: %q", got)
	}
	// The writer has stopped: the retry command, as printed, finishes the job.
	args := strings.Fields(out.Retry)[1:]
	r = ok(t, dir, args...)
	if got, _ := os.ReadFile(name); !bytes.Equal(got, first) || strings.Contains(r.stdout, "in use") {
		t.Fatalf("retry: grow.bin has %d bytes, want %d\n%s", len(got), len(first), r.stdout)
	}
	chainKinds(t, dir)
}

// TestRewindKeepsSocketText: a socket where the target has a file is left alone, and the text
// output says so and how to get the target's version.
func TestRewindKeepsSocketText(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "app.sock"), []byte("a file in the target\n"), 0o644)
	c1 := jsonOK[cpOut](t, dir, "checkpoint", "C1")
	os.Remove(filepath.Join(dir, "app.sock"))
	l, err := net.Listen("unix", filepath.Join(dir, "app.sock"))
	if err != nil {
		t.Skipf("cannot make a Unix socket here: %v", err)
	}
	defer l.Close()
	r := ok(t, dir, "rewind", c1.ID)
	for _, s := range []string{"app.sock: socket: not captured by the safety checkpoint", "differs from it only in the paths left alone", "paths in use were left as they are", "then run: agent-rewind rewind " + c1.ID} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("rewind text lacks %q:\n%s", s, r.stdout)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "app.sock")); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("the socket was replaced: %v %v", fi, err)
	}
}

// TestRewindUndoneWhenObjectIsADirectory is the repro: a stored content replaced by a
// directory makes reading the target fail with EISDIR. The rewind is undone (exit 1, saying so),
// the workspace is as it was, and the next commands work.
func TestRewindUndoneWhenObjectIsADirectory(t *testing.T) {
	dir := t.TempDir()
	// d/f6 is over 1 MiB, so its content is a loose object (small ones are packed).
	bash(t, dir, `mkdir -p d; for i in 1 2 3 4 5; do echo "v1 $i" > d/f$i; done; head -c 1100000 /dev/zero > d/f6`)
	c1 := jsonOK[cpOut](t, dir, "checkpoint", "C1")
	bash(t, dir, `for i in 1 2 3; do echo "v2 $i" > d/f$i; done; rm d/f6; echo new > n.txt`)
	before := readTree(t, dir)
	d := jsonOK[diffOut](t, dir, "diff", c1.ID)
	var blob string
	for _, c := range d.Changes {
		if c.Path == "d/f6" && c.From != nil {
			blob = c.From.Blob
		}
	}
	if blob == "" {
		t.Fatalf("d/f6 not in the diff: %+v", d.Changes)
	}
	object := filepath.Join(stateDir(t, dir), "objects", blob[:2], blob[2:])
	if err := os.Remove(object); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(object, 0o700)
	r := run(t, dir, "", "rewind", c1.ID)
	if r.code != 1 || !strings.Contains(r.stderr, "put back to the safety checkpoint") {
		t.Fatalf("rewind with an object replaced by a directory: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if diff := treeDiff(before, readTree(t, dir)); diff != "" {
		t.Fatalf("the workspace is a mix:\n%s", diff)
	}
	if r := ok(t, dir, "list"); r.stderr != "" {
		t.Fatalf("list after the undone rewind: %q", r.stderr)
	}
	ok(t, dir, "checkpoint", "after")
	chainKinds(t, dir)
}
