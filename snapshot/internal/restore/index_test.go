package restore

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// TestIndexChanges: a written file of the target is cached with its fresh stat; a touched path
// that is not such a file (removed, a symlink, a file not as the target has it), and every folder
// above a touched path, is dropped.
func TestIndexChanges(t *testing.T) {
	w := newWorkspace(t)
	w.put("d/new.txt", "new", 0o644)
	w.put("d/short.txt", "short", 0o644)
	want := sorted([]manifest.Entry{dir("d"), file("d/new.txt", "new"), file("d/short.txt", "not this size"), {Path: "ln", Type: manifest.TypeSymlink, Target: "x"}})
	set, removed := IndexChanges(w.root, want, map[string]bool{"d/new.txt": true, "d/short.txt": true, "gone/f.txt": true, "ln": true})
	if len(set) != 1 || set[0].Path != "d/new.txt" || set[0].St != w.seen["d/new.txt"] || set[0].Blob != want[1].Blob {
		t.Errorf("set %+v, want d/new.txt with its stat and content", set)
	}
	if got := strings.Join(removed, " "); got != " d d/short.txt gone gone/f.txt ln" {
		t.Errorf("removed %q", got)
	}
}

// TestIndexEntries: a rebuilt cache holds the target's files as they are now (written ones with
// a fresh stat, others only with the target's content), and the trees of folders under which
// nothing was touched, unless .rewindignore was.
func TestIndexEntries(t *testing.T) {
	w := newWorkspace(t)
	w.put("a/same.txt", "same", 0o644)
	w.put("b/written.txt", "new", 0o644)
	w.put("c/excluded.txt", "live", 0o644)
	live := func(p string, e manifest.Entry) walk.LiveEntry {
		st, _ := platform.Lstat(filepath.Join(w.root, p))
		return walk.LiveEntry{Entry: e, St: st}
	}
	entries := []walk.LiveEntry{
		live("a", dir("a")), live("a/same.txt", file("a/same.txt", "same")),
		live("b", dir("b")), live("b/written.txt", file("b/written.txt", "old")),
		live("c", dir("c")), live("c/excluded.txt", file("c/excluded.txt", "live")),
	}
	treeA, treeB, rootTree := objects.Sum([]byte("a")), objects.Sum([]byte("b")), objects.Sum([]byte("root"))
	rootSt, _ := platform.Lstat(w.root)
	want := []manifest.Entry{dir("a"), file("a/same.txt", "same"), dir("b"), file("b/written.txt", "new"), dir("c"), file("c/excluded.txt", "target")}
	l := Live{Entries: entries, Trees: map[string]objects.Hash{"": rootTree, "a": treeA, "b": treeB}, RootStat: rootSt}
	touched := map[string]bool{"b/written.txt": true}
	out, kept := IndexEntries(w.root, want, l, touched)
	if !kept {
		t.Fatal("trees not kept")
	}
	got := map[string]statcache.Entry{}
	for _, e := range out {
		got[e.Path] = e
	}
	if len(got) != 3 || got["a"].Blob != treeA || got["a/same.txt"].St != entries[1].St || got["b/written.txt"].St != w.seen["b/written.txt"] {
		t.Errorf("entries %+v, want a's tree, a/same.txt as seen, b/written.txt freshly statted", out)
	}
	touched[walk.IgnoreFile] = true
	if out, kept := IndexEntries(w.root, want, l, touched); kept || len(out) != 2 {
		t.Errorf("after .rewindignore changed: %+v (trees kept %v), want the two files only", out, kept)
	}
}
