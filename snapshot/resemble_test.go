package snapshot

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestResembles: a cp -a copy of a workspace is recognised from its store (the top folder, and
// the stat cache's sizes and times); a copy that did not keep the times, a changed copy, and
// another folder are not; without a stat cache the top folder's contents decide.
func TestResembles(t *testing.T) {
	cp := needTool(t, "cp")
	root, s := nestedWorkspace(t, 30)
	put(t, root, "README", "read me\n", 0o644)
	old := time.Now().Add(-2 * time.Hour).Truncate(time.Second).Add(123456789)
	setTimes := func(dir string, at time.Time) {
		filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, at, at) })
	}
	setTimes(root, old)
	c, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	copyOf := func(args ...string) string {
		dst := filepath.Join(t.TempDir(), "copy")
		if out, err := exec.Command(cp, append(args, root, dst)...).CombinedOutput(); err != nil {
			t.Fatalf("cp %v: %v %s", args, err, out)
		}
		return dst
	}
	exact := copyOf("-a")
	if id, ok := Resembles(s.StateDir(), exact); !ok || id != c.ID {
		t.Fatalf("a cp -a copy: %q %v", id, ok)
	}
	if _, ok := Resembles(s.StateDir(), copyOf("-r")); ok {
		t.Fatal("a copy with new times (cp -r) taken for a copy")
	}
	if _, ok := Resembles(s.StateDir(), t.TempDir()); ok {
		t.Fatal("an empty folder taken for a copy")
	}
	// The same files made anew within the same second (a second clone, say): not a copy. A copy
	// that kept seconds only (tar): a copy.
	twin := copyOf("-r")
	setTimes(twin, old.Add(1000))
	if _, ok := Resembles(s.StateDir(), twin); ok {
		t.Fatal("the same files with times of the same second but other nanoseconds taken for a copy")
	}
	setTimes(twin, old.Truncate(time.Second))
	if _, ok := Resembles(s.StateDir(), twin); !ok {
		t.Fatal("a copy that kept whole seconds not recognised")
	}
	changed := copyOf("-a")
	os.Remove(filepath.Join(changed, "README"))
	if _, ok := Resembles(s.StateDir(), changed); ok {
		t.Fatal("a copy missing a top file taken for a copy")
	}
	// More in the copy than the checkpoint holds (what the rules exclude is copied too) is fine.
	put(t, exact, "node_modules/x.js", "x\n", 0o644)
	if _, ok := Resembles(s.StateDir(), exact); !ok {
		t.Fatal("a copy with one more folder not recognised")
	}
	// Without a stat cache, the top folder's files by content.
	os.Remove(filepath.Join(s.StateDir(), "index"))
	os.Remove(filepath.Join(s.StateDir(), "index-log"))
	if _, ok := Resembles(s.StateDir(), exact); !ok {
		t.Fatal("a cp -a copy, the store without a stat cache: not recognised")
	}
	put(t, exact, "README", "READ ME\n", 0o644)
	os.Chtimes(filepath.Join(exact, "README"), old, old) // the same time: the content tells
	if _, ok := Resembles(s.StateDir(), exact); ok {
		t.Fatal("a top file of the same size but another content taken for the same")
	}
	if _, ok := Resembles(filepath.Join(t.TempDir(), "no store"), exact); ok {
		t.Fatal("no store resembles anything")
	}
}
