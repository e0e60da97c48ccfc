package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// storeOut is "store --json".
type storeOut struct {
	ID, Store, Workspace string
	Adopted              bool
	ForkedFrom, Offered  string
}

// TestCopiedWorkspace: a cp -a copy of a workspace is a new folder to agent-rewind (stores are
// found by identity), so it starts a history of its own; its first command says that it looks
// like a copy of the original, that the effects spent there are not spent here, and how to
// continue the original's history instead. "store --adopt" then gives the copy a store of its
// own that begins as a copy of the original's: its checkpoints rewind, its spent effects are
// refused, the store the first command made is set aside (an orphan, not removed), and the
// original keeps its store untouched.
func TestCopiedWorkspace(t *testing.T) {
	cp, err := exec.LookPath("cp")
	if err != nil {
		t.Skip("no cp on PATH")
	}
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	orig := filepath.Join(t.TempDir(), "project")
	putFile(t, orig, "main.go", "package main\n", 0o644)
	putFile(t, orig, "docs/a.md", "# a\n", 0o644)
	os.Mkdir(filepath.Join(orig, ".git"), 0o755)
	first := checkpointID(t, orig, "before the charge")
	charge := `{"key": "charge-invoice-42", "payload": {"amount": 100}}`
	ok(t, orig, "guard", charge)
	origStore := jsonOK[storeOut](t, orig, "store")

	copied := filepath.Join(t.TempDir(), "project-copy")
	if out, err := exec.Command(cp, "-a", orig, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
	// The first command in the copy says what it is and what to do.
	r := run(t, copied, "", "checkpoint", "in the copy")
	for _, want := range []string{copied + " looks like a copy of " + orig, "checkpoint " + first, "the effects spent there are not spent here", `"agent-rewind store --adopt ` + origStore.ID + `"`} {
		if r.code != 0 || !strings.Contains(r.stderr, want) {
			t.Fatalf("the first command in the copy: %+v; want it to say %q", r, want)
		}
	}
	fresh := jsonOK[storeOut](t, copied, "store")
	if fresh.ID == origStore.ID || fresh.Offered != origStore.ID {
		t.Fatalf("the copy's first store: %+v", fresh)
	}
	if r := run(t, copied, "", "checkpoint", "again"); strings.Contains(r.stderr, "looks like a copy") {
		t.Fatalf("said twice: %q", r.stderr)
	}

	// Continue the original's history here.
	r = run(t, copied, "", "store", "--adopt", origStore.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "the history of store "+origStore.ID+" continues here") {
		t.Fatalf("store --adopt in the copy: %+v", r)
	}
	forked := jsonOK[storeOut](t, copied, "store")
	if forked.ID == origStore.ID || forked.ID == fresh.ID || forked.ForkedFrom != origStore.ID || forked.Workspace != copied {
		t.Fatalf("the copy's store after --adopt: %+v", forked)
	}
	if r := run(t, copied, "", "guard", charge); r.code != 2 {
		t.Fatalf("the spent charge in the copy after --adopt: %+v", r)
	}
	putFile(t, copied, "main.go", "package main // changed in the copy\n", 0o644)
	ok(t, copied, "rewind", first)
	if got := readFile(t, filepath.Join(copied, "main.go")); got != "package main\n" {
		t.Fatalf("the copy rewound to the original's checkpoint: main.go %q", got)
	}
	if out := jsonOK[checkOut](t, copied, "check"); !out.OK || out.Found != 0 {
		t.Fatalf("check in the copy: %+v", out)
	}
	// The original is untouched: its own store, its chain intact, the charge spent.
	if again := jsonOK[storeOut](t, orig, "store"); again.ID != origStore.ID {
		t.Fatalf("the original's store: %+v", again)
	}
	ok(t, orig, "chain", "verify")
	if r := run(t, orig, "", "guard", charge); r.code != 2 {
		t.Fatalf("the charge in the original: %+v", r)
	}
	// The copy's first store is set aside, not removed.
	if r := ok(t, copied, "gc", "--orphans", "--dry-run"); !strings.Contains(r.stdout, fresh.ID) {
		t.Fatalf("gc --orphans --dry-run does not list the copy's first store %s:\n%s", fresh.ID, r.stdout)
	}
	if _, err := os.Stat(fresh.Store); err != nil {
		t.Fatalf("the copy's first store was removed: %v", err)
	}
	// A second --adopt of the same history is a no-op; another store's is refused.
	if again := jsonOK[storeOut](t, copied, "store", "--adopt", origStore.ID); again.ID != forked.ID {
		t.Fatalf("a second --adopt: %+v", again)
	}
	if r := run(t, copied, "", "store", "--adopt", fresh.ID); r.code != 1 || !strings.Contains(r.stderr, "already has store") {
		t.Fatalf("--adopt of a store not offered: %+v", r)
	}
}

// A folder made again at the path of a deleted one: its first command offers the old history,
// and --adopt continues it even after that command made a store (which is set aside).
func TestRecreatedFolderAdoptsAfterItsFirstCommand(t *testing.T) {
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	ws := filepath.Join(t.TempDir(), "project")
	putFile(t, ws, "a.txt", "one\n", 0o644)
	first := checkpointID(t, ws, "first")
	old := jsonOK[storeOut](t, ws, "store")
	os.RemoveAll(ws)
	putFile(t, ws, "a.txt", "two\n", 0o644)
	r := run(t, ws, "", "checkpoint", "in the new folder")
	if r.code != 0 || !strings.Contains(r.stderr, `"agent-rewind store --adopt `+old.ID+`"`) {
		t.Fatalf("the first command in the new folder: %+v", r)
	}
	if r := run(t, ws, "", "store", "--adopt", old.ID); r.code != 0 || !strings.Contains(r.stdout, "now belongs to "+ws) {
		t.Fatalf("store --adopt after the first command: %+v", r)
	}
	ok(t, ws, "rewind", first)
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\n" {
		t.Fatalf("after the rewind: %q", got)
	}
}

// store --adopt in a copy, SIGKILLed at random moments: the original's store is never touched,
// the copy keeps the store its first command made or gets the whole fork, never half of one,
// and an --adopt run to its end afterwards continues the original's history.
func TestAdoptInACopyKilled(t *testing.T) {
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	orig := filepath.Join(t.TempDir(), "project")
	for i := range 200 {
		putFile(t, orig, fmt.Sprintf("src/f%03d.txt", i), strings.Repeat("x", i)+"\n", 0o644)
	}
	first := checkpointID(t, orig, "first")
	ok(t, orig, "guard", `{"key": "k", "payload": 1}`)
	origStore := jsonOK[storeOut](t, orig, "store")
	r := rand.New(rand.NewPCG(26, 26))
	var window time.Duration
	for trial := range 8 {
		copied := filepath.Join(t.TempDir(), "copy")
		if out, err := exec.Command("cp", "-a", orig, copied).CombinedOutput(); err != nil {
			t.Fatalf("cp -a: %v %s", err, out)
		}
		if r := run(t, copied, "", "list"); r.code != 1 || !strings.Contains(r.stderr, "looks like a copy of "+orig) {
			t.Fatalf("list, the first command in the copy: %+v", r)
		}
		ok(t, copied, "checkpoint") // a store of its own, offering the original's
		fresh := jsonOK[storeOut](t, copied, "store")
		cmd := exec.Command(bin, "store", "--adopt", origStore.ID)
		cmd.Dir = copied
		killTrial(t, cmd, trial, r, &window)
		now := jsonOK[storeOut](t, copied, "store")
		if now.ID != fresh.ID && now.ForkedFrom != origStore.ID {
			t.Fatalf("trial %d: the copy's store is %+v", trial, now)
		}
		if now.ID != fresh.ID {
			if out := jsonOK[checkOut](t, copied, "check"); !out.OK {
				t.Fatalf("trial %d: the fork does not check: %+v", trial, out)
			}
		}
		ok(t, copied, "store", "--adopt", origStore.ID)
		if r := run(t, copied, "", "guard", `{"key": "k", "payload": 1}`); r.code != 2 {
			t.Fatalf("trial %d: the spent key in the copy: %+v", trial, r)
		}
		ok(t, copied, "rewind", first)
		if out := jsonOK[checkOut](t, orig, "check"); !out.OK {
			t.Fatalf("trial %d: the original's store: %+v", trial, out)
		}
	}
}
