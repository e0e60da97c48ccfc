package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot"
)

// compared takes watcher-assisted checkpoints of one workspace and checks each against a full
// walk taken right after it, as the property test does.
type compared struct {
	t           *testing.T
	s           *snapshot.Store
	root, store string
}

func newCompared(t *testing.T, root, store string) *compared {
	t.Helper()
	s, err := snapshot.Open(root, snapshot.Options{StateDir: store})
	if err != nil {
		t.Fatal(err)
	}
	return &compared{t: t, s: s, root: root, store: store}
}

// check takes an assisted checkpoint, then a full walk, fails the test when their manifests
// differ (naming step), and returns the assisted checkpoint's walk and the watcher's reason.
func (c *compared) check(step string) (snapshot.Walk, string) {
	t := c.t
	t.Helper()
	ctx := context.Background()
	cur, err := c.s.Current()
	if err != nil {
		t.Fatal(err)
	}
	hint, tok, why, err := Hint(c.store, c.root, cur)
	if err != nil && !errors.Is(err, ErrNotRunning) {
		t.Logf("%s: the watcher did not answer: %v", step, err)
	}
	a, err := c.s.CheckpointChanged(ctx, "", hint)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if tok != "" {
		if err := WritePosition(c.store, a.ID, tok); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ = c.s.Current()
	_, tok2, _, _ := Hint(c.store, c.root, cur)
	f, err := c.s.Checkpoint(ctx, "")
	if err != nil {
		t.Fatalf("%s: full walk: %v", step, err)
	}
	if tok2 != "" {
		WritePosition(c.store, f.ID, tok2)
	}
	if a.Manifest != f.Manifest {
		ae, _ := c.s.Entries(a.ID)
		fe, _ := c.s.Entries(f.ID)
		t.Fatalf("%s: the assisted checkpoint (walk %+v, %s) differs from a full walk:\n%s", step, a.Walk, why, entryDiff(ae, fe))
	}
	return a.Walk, why
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHardLinkedFilesAllNamesSeen: a file with several names changes through one of them; every
// name is recorded with the new content (issue 26: after "echo one > a; ln a b; ln a sub/c", a
// checkpoint, then "echo two > a", b and sub/c kept the old content). Also links made while the
// watcher runs, writes through a name outside the workspace, a linked file moved in, and a
// folder holding a link renamed.
func TestHardLinkedFilesAllNamesSeen(t *testing.T) {
	root, store, outside := t.TempDir(), filepath.Join(t.TempDir(), "store"), t.TempDir()
	at := func(p string) string { return filepath.Join(root, p) }
	writeFile(t, at("a"), "one\n")
	writeFile(t, at("sub/keep"), "keep\n")
	must(t, os.Link(at("a"), at("b")))
	must(t, os.Link(at("a"), at("sub/c")))
	writeFile(t, at("g"), "g one\n")
	must(t, os.Link(at("g"), filepath.Join(outside, "g")))
	writeFile(t, at("e"), "e one\n")
	c := newCompared(t, root, store)
	startWatcher(t, root, store)
	c.check("the first checkpoint")
	if w, why := c.check("nothing changed"); w.Mode != "changed" {
		t.Fatalf("nothing changed: walk %+v (%s), want the watcher's hint", w, why)
	}

	writeFile(t, at("a"), "two\n")
	if w, why := c.check("a written"); w.Mode != "changed" || w.Linked < 3 {
		t.Fatalf("a written: walk %+v (%s), want the hint with a, b and sub/c counted as linked", w, why)
	}
	writeFile(t, at("sub/c"), "three\n")
	c.check("sub/c written")
	must(t, os.Chmod(at("b"), 0o600))
	c.check("b chmod")
	// A link made while the watcher runs, to a file that had one name.
	must(t, os.Link(at("e"), at("sub/e2")))
	c.check("e linked")
	writeFile(t, at("e"), "e two\n")
	c.check("e written after it was linked")
	writeFile(t, at("sub/e2"), "e three\n")
	c.check("sub/e2 written")
	// A write through a name outside the workspace, to a file linked there before the watcher
	// started.
	writeFile(t, filepath.Join(outside, "g"), "g two\n")
	c.check("g written from outside")
	// A file moved in that has another name outside: its own watch is new.
	writeFile(t, filepath.Join(outside, "m"), "m one\n")
	must(t, os.Link(filepath.Join(outside, "m"), filepath.Join(outside, "m2")))
	must(t, os.Rename(filepath.Join(outside, "m2"), at("m")))
	c.check("m moved in")
	writeFile(t, filepath.Join(outside, "m"), "m two\n")
	c.check("m written from outside")
	// A folder holding a link renamed, then the first name removed.
	must(t, os.Rename(at("sub"), at("sub2")))
	c.check("sub renamed")
	writeFile(t, at("b"), "four\n")
	c.check("b written after the rename")
	must(t, os.Remove(at("a")))
	writeFile(t, at("sub2/c"), "five\n")
	c.check("a removed, sub2/c written")
}

// TestWorkspaceParentRenamed: the workspace's parent folder renamed under a running watcher
// (issue 26). A folder made meanwhile is watched all the same, and a folder made again at the old
// path is not mistaken for the workspace: the watcher refuses, checkpoints walk.
func TestWorkspaceParentRenamed(t *testing.T) {
	top := t.TempDir()
	parent, moved := filepath.Join(top, "parent"), filepath.Join(top, "moved")
	root, store := filepath.Join(parent, "ws"), filepath.Join(top, "store")
	writeFile(t, filepath.Join(root, "f"), "f\n")
	c := newCompared(t, root, store)
	startWatcher(t, root, store)
	c.check("the first checkpoint")
	c.check("nothing changed")

	// Renamed away and back: a folder made while away gets its watch.
	must(t, os.Rename(parent, moved))
	must(t, os.Mkdir(filepath.Join(moved, "ws", "new"), 0o755))
	drained(t, store) // the watcher has seen new while its path was another
	must(t, os.Rename(moved, parent))
	c.check("new made while the parent was renamed")
	writeFile(t, filepath.Join(root, "new", "in"), "in\n")
	c.check("a file in new")

	// Renamed away for good, and a folder made again at the old path.
	must(t, os.Rename(parent, moved))
	must(t, os.MkdirAll(root, 0o755))
	c2 := newCompared(t, filepath.Join(moved, "ws"), store)
	must(t, os.Mkdir(filepath.Join(moved, "ws", "new2"), 0o755))
	c2.check("new2 made after the parent moved")
	writeFile(t, filepath.Join(moved, "ws", "new2", "in"), "in\n")
	if w, why := c2.check("a file in new2"); w.Mode != "full" {
		t.Fatalf("after the workspace moved: walk %+v (%s), want a full walk", w, why)
	}
}

// drained returns once the in-process watcher of store has read every event queued so far.
func drained(t *testing.T, store string) {
	t.Helper()
	v, ok := local.Load(store)
	if !ok {
		t.Fatal("no watcher runs in this process for " + store)
	}
	if err := v.(*server).t.caughtUp(); err != nil {
		t.Fatal(err)
	}
}

// reasonHas fails unless why says want.
func reasonHas(t *testing.T, step string, w snapshot.Walk, why, want string) {
	t.Helper()
	if w.Mode != "full" || !strings.Contains(why+w.Reason, want) {
		t.Fatalf("%s: walk %+v (%s), want a full walk saying %q", step, w, why, want)
	}
}
