package restore

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
)

func pathsOf(es []manifest.Entry) string {
	var ps []string
	for _, e := range es {
		ps = append(ps, e.Path)
	}
	return strings.Join(ps, " ")
}

// TestSelectPaths: a chosen path brings everything under it and a killed run's temporary file
// beside it, the live folders on its way (as they are, so unchanged) or the checkpoint's where
// the workspace has none, and nothing else.
func TestSelectPaths(t *testing.T) {
	live := []manifest.Entry{
		dir("a"), dir("a/b"), file("a/b/"+TempPrefix+"0123", "partial"), file("a/b/c.txt", "live"), file("a/b/cd.txt", "other"),
		file("a/other.txt", "o"), file("z.txt", "z"),
	}
	want := []manifest.Entry{
		dir("a"), dir("a/b"), file("a/b/c.txt", "old"), dir("n"), dir("n/m"), file("n/m/new.txt", "new"), file("z.txt", "z0"),
	}
	want[0].Mode = 0o700 // the live folder's mode wins: a folder on the way is never changed
	l, w, err := SelectPaths(live, want, []string{"a/b/c.txt", "n/m"}, "ck", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := pathsOf(l); got != "a a/b a/b/"+TempPrefix+"0123 a/b/c.txt" {
		t.Errorf("live %q", got)
	}
	if got := pathsOf(w); got != "a a/b a/b/c.txt n n/m n/m/new.txt" {
		t.Errorf("wanted %q", got)
	}
	if w[0].Mode != live[0].Mode {
		t.Errorf("folder on the way has mode %o in the wanted entries, want the live %o", w[0].Mode, live[0].Mode)
	}
	if cs := manifest.Diff(l, w); len(cs) != 5 || !slices.ContainsFunc(cs, func(c manifest.Change) bool { return c.Path == "a/b/c.txt" && c.Kind == manifest.ChangeModified }) {
		t.Errorf("changes %+v: want the temporary file deleted, c.txt modified, n, n/m and new.txt added", cs)
	}
}

// TestSelectPathsRefuses: a path neither state has, a path through a non-folder of either, and a
// live non-folder where a folder must be are refused, each naming what to do; recovery (not
// strict) accepts a path gone from both.
func TestSelectPathsRefuses(t *testing.T) {
	live := []manifest.Entry{file("f", "x"), {Path: "ln", Type: manifest.TypeSymlink, Target: "a"}}
	want := []manifest.Entry{dir("f"), file("f/g", "y"), file("k", "k")}
	for _, tc := range []struct {
		path string
		want error
		says string
	}{
		{"nope", ErrNoSuchPath, "neither in checkpoint ck nor in the workspace"},
		{"ln/x", ErrUnsafePath, "passes through ln, a symlink in the workspace"},
		{"k/x", ErrUnsafePath, "passes through k, a file in checkpoint ck"},
		{"f/g", ErrUnsafePath, "f is a file in the workspace, where restoring f/g needs a folder"},
	} {
		_, _, err := SelectPaths(live, want, []string{tc.path}, "ck", true)
		if !errors.Is(err, tc.want) || err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.path, err, tc.want, tc.says)
		}
	}
	if _, _, err := SelectPaths(live, want, []string{"nope"}, "ck", false); err != nil {
		t.Errorf("not strict: %v", err)
	}
}
