package watch

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// The Windows tree, driven by real changes to real folders: what ReadDirectoryChangesW reports
// is what each answer holds. These run under Wine (tools/wine/run) as on Windows.

// watchedTree watches root with a cookie folder of its own, and the server whose cookie round
// trip answers wait for.
func watchedTree(t *testing.T, root string) *server {
	t.Helper()
	tr, err := newTree(root, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.close() })
	return &server{t: tr}
}

// ask catches up (the cookie round trip) and answers since tok.
func (s *server) ask(t *testing.T, tok string) Reply {
	t.Helper()
	if err := s.sync(); err != nil {
		t.Fatal(err)
	}
	var r Reply
	s.t.since("w", tok, &r)
	return r
}

// first is the token of an answer before any change.
func (s *server) first(t *testing.T) string {
	t.Helper()
	r := s.ask(t, "")
	if r.Token == "" || !strings.Contains(r.Refused, "no token") {
		t.Fatalf("first answer: %+v", r)
	}
	return r.Token
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantPaths fails unless every path of want is among r's and none of absent is.
func wantPaths(t *testing.T, r Reply, want, absent []string) {
	t.Helper()
	if r.Refused != "" {
		t.Fatalf("refused: %s", r.Refused)
	}
	for _, p := range want {
		if !slices.Contains(r.Paths, p) {
			t.Errorf("%s is not among the paths changed, %q", p, r.Paths)
		}
	}
	for _, p := range absent {
		if slices.Contains(r.Paths, p) {
			t.Errorf("%s, unchanged, is among the paths changed, %q", p, r.Paths)
		}
	}
}

// TestTreeReportsChanges: a file created, written, renamed and removed, a folder made with a
// file in it, a folder renamed and one removed with what they held: each is reported, as it is
// named now and as it was; what did not change is not.
func TestTreeReportsChanges(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"b.txt", "c.txt", "e.txt", "same.txt", "g/inner.txt", "g/deep/x.txt", "gone/y.txt", "keep/z.txt"} {
		write(t, filepath.Join(root, f), "old")
	}
	s := watchedTree(t, root)
	tok := s.first(t)
	write(t, filepath.Join(root, "a.txt"), "new")
	write(t, filepath.Join(root, "b.txt"), "written")
	must(t, os.Rename(filepath.Join(root, "c.txt"), filepath.Join(root, "d.txt")))
	must(t, os.Remove(filepath.Join(root, "e.txt")))
	write(t, filepath.Join(root, "f", "x.txt"), "new")
	must(t, os.Rename(filepath.Join(root, "g"), filepath.Join(root, "h")))
	must(t, os.RemoveAll(filepath.Join(root, "gone")))
	r := s.ask(t, tok)
	if winpath.UnderWine() {
		// Wine's watch loses a moved folder (it reports changes in it under its old name, or
		// none): the watcher refuses, with no token.
		if r.Token != "" || !strings.Contains(r.Refused, "folder g was moved") {
			t.Fatalf("under Wine, after a folder was moved: %+v, want refused with no token", r)
		}
		return
	}
	wantPaths(t, r, []string{"a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f", "g", "h", "gone"}, []string{"same.txt", "keep", "keep/z.txt"})
	if r.Token == tok {
		t.Errorf("the token did not move: %s", r.Token)
	}

	// Inside the renamed folder, under its new name.
	tok = r.Token
	write(t, filepath.Join(root, "h", "deep", "x.txt"), "written again")
	wantPaths(t, s.ask(t, tok), []string{"h/deep/x.txt"}, []string{"g/deep/x.txt", "a.txt"})
}

// TestTreeCatchesUp: a change made just before the question is always in its answer (the cookie
// round trip waits for the root's watch to have been read up to it).
func TestTreeCatchesUp(t *testing.T) {
	root := t.TempDir()
	s := watchedTree(t, root)
	tok := s.first(t)
	for i := range 100 {
		name := "f" + strconv.Itoa(i)
		write(t, filepath.Join(root, name), "x")
		r := s.ask(t, tok)
		if r.Refused != "" || !slices.Contains(r.Paths, name) {
			t.Fatalf("round %d: %s, written before the question, is not in its answer %+v", i, name, r)
		}
		tok = r.Token
	}
}

// TestTreeOverflow: changes that do not fit in the watch's buffer before it is read are lost,
// and the watcher refuses, with no token (it then stops), as on an inotify queue overflow.
func TestTreeOverflow(t *testing.T) {
	defer func(n int) { notifyBuffer = n }(notifyBuffer)
	notifyBuffer = 512
	root := t.TempDir()
	s := watchedTree(t, root)
	tok := s.first(t)
	s.t.mu.Lock() // the reader cannot record what it reads, nor start the next read, meanwhile
	for i := range 300 {
		if err := os.WriteFile(filepath.Join(root, "many-changes-"+strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
			s.t.mu.Unlock()
			t.Fatal(err)
		}
	}
	s.t.mu.Unlock()
	if err := s.sync(); err != nil {
		t.Logf("sync after the overflow: %v", err)
	}
	var r Reply
	s.t.since("w", tok, &r)
	if r.Token != "" || !strings.Contains(r.Refused, "overflowed") {
		t.Fatalf("after 300 changes into a 512-byte buffer: %+v, want refused (overflowed) with no token", r)
	}
}

// TestTreeRootMoved: once the workspace's folder is renamed, or removed, the watcher refuses.
func TestTreeRootMoved(t *testing.T) {
	for _, how := range []string{"renamed", "removed"} {
		t.Run(how, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "ws")
			write(t, filepath.Join(root, "a.txt"), "x")
			s := watchedTree(t, root)
			tok := s.first(t)
			if how == "renamed" {
				must(t, os.Rename(root, root+"-moved"))
			} else {
				err := os.RemoveAll(root)
				if _, serr := os.Stat(root); winpath.UnderWine() && (err != nil || serr == nil) {
					t.Skipf("Wine does not remove a folder that a handle holds, even one sharing deletion, until the handle is closed (%v), and does not say that it is to go (no delete pending): the watcher watches it on, and answers right about what is in it", err)
				}
				must(t, err)
			}
			var r Reply
			s.sync() // may time out: the root's watch may have ended
			s.t.since("w", tok, &r)
			if r.Token != "" || !strings.Contains(r.Refused, "not the folder this watcher watches") && !strings.Contains(r.Refused, "ended") {
				t.Fatalf("root %s: %+v, want refused with no token", how, r)
			}
			if s.t.rootMoved() == "" {
				t.Fatal("rootMoved says the root is still the folder watched")
			}
			if how == "renamed" {
				write(t, filepath.Join(root, "a.txt"), "a folder made again at the old path")
				if s.t.rootMoved() == "" {
					t.Fatal("a new folder at the root's path is taken for the one watched")
				}
			}
		})
	}
}

// TestTreeNamesLinkedFiles: every name in the workspace of a file with more than one link is in
// every answer (a write through one name is reported under that name only, and one through a
// name outside the workspace under none), counted as linked; a name made for a file whose other
// names the watcher did not know makes it learn them.
func TestTreeNamesLinkedFiles(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "a"), "x")
	must(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	if err := os.Link(filepath.Join(root, "a"), filepath.Join(root, "sub", "b")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	write(t, filepath.Join(root, "single"), "y")
	s := watchedTree(t, root)
	tok := s.first(t)
	r := s.ask(t, tok)
	wantPaths(t, r, []string{"a", "sub/b"}, []string{"single"})
	if r.Linked != 2 {
		t.Errorf("linked = %d, want 2 (a, sub/b)", r.Linked)
	}

	// single gets a second name, outside the workspace: the watcher sees nothing; then one
	// inside: it learns single too, and names it as changed.
	must(t, os.Link(filepath.Join(root, "single"), filepath.Join(outside, "other")))
	must(t, os.Link(filepath.Join(root, "single"), filepath.Join(root, "sub", "third")))
	r = s.ask(t, r.Token)
	wantPaths(t, r, []string{"a", "sub/b", "single", "sub/third"}, nil)
	if r.Linked != 4 {
		t.Errorf("linked = %d, want 4", r.Linked)
	}

	// A write through the name outside: reported under no name, but every name inside is named.
	write(t, filepath.Join(outside, "other"), "written outside")
	wantPaths(t, s.ask(t, r.Token), []string{"single", "sub/third"}, nil)

	// Down to one name again: no longer named.
	must(t, os.Remove(filepath.Join(root, "sub", "b")))
	r = s.ask(t, r.Token)
	tok = r.Token
	r = s.ask(t, tok)
	wantPaths(t, r, []string{"single", "sub/third"}, []string{"sub/b"})
}

// TestTreeCaseRename: a name renamed to differ only in case is a name the folder still finds
// under its old spelling: the watcher reports the folder, read whole, rather than a path that a
// checkpoint would find twice.
func TestTreeCaseRename(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "sub", "Foo.txt"), "x")
	s := watchedTree(t, root)
	tok := s.first(t)
	must(t, os.Rename(filepath.Join(root, "sub", "Foo.txt"), filepath.Join(root, "sub", "foo.txt")))
	if ents, err := os.ReadDir(filepath.Join(root, "sub")); err != nil || len(ents) != 1 || ents[0].Name() != "foo.txt" {
		t.Skipf("the rename did not change the name's case (Wine keeps it): %v %v", ents, err)
	}
	r := s.ask(t, tok)
	wantPaths(t, r, []string{"sub"}, nil)
	for _, p := range r.Paths {
		if p == "sub/Foo.txt" || p == "sub/FOO.TXT" {
			t.Errorf("the old spelling %s is reported: a checkpoint would find foo.txt under it", p)
		}
	}
}

// TestTreeNamesReparsePoints: a symlink (a reparse point) below the root is named in every
// answer as one the watcher does not see behind.
func TestTreeNamesReparsePoints(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "target", "f"), "x")
	if err := os.Symlink(filepath.Join(root, "target"), filepath.Join(root, "link")); err != nil {
		t.Skipf("no symlinks here (Developer Mode or the privilege is needed): %v", err)
	}
	if a, err := attributes(filepath.Join(root, "link")); err != nil || a&0x400 == 0 {
		t.Skipf("this system does not show the symlink as a reparse point (attributes %#x, %v)", a, err)
	}
	s := watchedTree(t, root)
	r := s.ask(t, s.first(t))
	if r.Refused != "" || !slices.Contains(r.Mounts, "link") || !slices.Contains(r.Paths, "link") {
		t.Fatalf("answer %+v: want link among the mounts and the paths", r)
	}
}

// TestTreeSkipsTheStore: a store inside the workspace is not reported.
func TestTreeSkipsTheStore(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(root, ".rewind")
	must(t, os.MkdirAll(filepath.Join(store, "watch", "cookies"), 0o755))
	tr, err := newTree(root, store, filepath.Join(store, "watch", "cookies"))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	s := &server{t: tr}
	tok := s.first(t)
	write(t, filepath.Join(store, "objects", "x"), "store")
	write(t, filepath.Join(root, "w.txt"), "workspace")
	r := s.ask(t, tok)
	wantPaths(t, r, []string{"w.txt"}, nil)
	for _, p := range r.Paths {
		if strings.HasPrefix(p, ".rewind") {
			t.Errorf("the store's %s is reported", p)
		}
	}
}
