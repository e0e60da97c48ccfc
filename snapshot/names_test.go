package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// TestNamesWindowsCannotHold: a checkpoint made elsewhere holds names Windows cannot hold (a
// reserved device name, a name ending in a dot, a forbidden character, two names differing only
// by case). On Windows a rewind to it, its dry run, and a restore of such a path are refused
// before anything changes, naming the paths and what to do; a restore of a path it can hold
// from the same checkpoint works. Elsewhere the names are fine and the check does nothing.
func TestNamesWindowsCannotHold(t *testing.T) {
	if !platform.RestrictsNames {
		t.Skip("this system holds every name a manifest may: the check is Windows's (its rules are tested in internal/platform on every system)")
	}
	root := t.TempDir()
	put(t, root, "README", "read me\n", 0o644)
	put(t, root, "src/main.go", "package main\n", 0o644)
	s := mustOpen(t, root, Options{})
	base, err := s.Checkpoint(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.checkpointEntries(base.Checkpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	var blob Entry
	for _, e := range entries {
		if e.Path == "README" {
			blob = e
		}
	}
	for _, p := range []string{"readme", "src/CON.txt", "src/notes.", "src/a:b", "src/ok.go"} {
		e := blob
		e.Path = p
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	made := plantTrees(t, s, entries)
	put(t, root, "src/main.go", "package main // changed\n", 0o644)
	before := readState(t, root)
	for _, dry := range []bool{true, false} {
		_, err := s.Rewind(ctx, made, RestoreOptions{DryRun: dry})
		if !errors.Is(err, ErrNameNotHeld) {
			t.Fatalf("rewind (dry run %v) to a checkpoint of names Windows cannot hold: %v, want ErrNameNotHeld", dry, err)
		}
		for _, want := range []string{`"readme"`, `"src/CON.txt"`, `"src/notes."`, `"src/a:b"`, "agent-rewind restore " + made, "nothing was changed"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal does not say %s: %v", want, err)
			}
		}
		if strings.Contains(err.Error(), "src/ok.go") {
			t.Errorf("the refusal names a path Windows can hold: %v", err)
		}
		if d := diffStates(before, readState(t, root)); d != "" {
			t.Fatalf("a refused rewind changed the workspace:\n%s", d)
		}
		t.Log(err)
	}
	if _, err := s.RestorePaths(ctx, made, []string{"src/CON.txt"}, RestoreOptions{}); !errors.Is(err, ErrNameNotHeld) {
		t.Errorf("restore of src/CON.txt: %v, want ErrNameNotHeld", err)
	}
	if _, err := s.RestorePaths(ctx, made, []string{"src/ok.go"}, RestoreOptions{}); err != nil {
		t.Fatalf("restore of src/ok.go, which Windows can hold: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "src", "ok.go")); err != nil || string(b) != "read me\n" {
		t.Errorf("src/ok.go after its restore: %q, %v", b, err)
	}
}

// TestRestoreDeepPath: a path longer than Windows's old limit of 260 characters (Go opens long
// absolute paths with the \\?\ prefix) is checkpointed and restored like any other.
func TestRestoreDeepPath(t *testing.T) {
	root := t.TempDir()
	var parts []string
	for i := range 6 {
		parts = append(parts, strings.Repeat(string(rune('a'+i)), 60))
	}
	deep := strings.Join(parts, "/") + "/file.txt"
	if n := len(filepath.Join(root, deep)); n <= 300 {
		t.Fatalf("the deep path is %d characters, want over 300", n)
	}
	put(t, root, deep, "deep\n", 0o644)
	s := mustOpen(t, root, Options{})
	cp, err := s.Checkpoint(ctx, "deep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, parts[0])); err != nil {
		t.Fatal(err)
	}
	put(t, root, deep, "changed\n", 0o644)
	if _, err := s.Rewind(ctx, cp.Checkpoint.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(deep))); err != nil || string(b) != "deep\n" {
		t.Fatalf("the deep file after the rewind: %q, %v", b, err)
	}
	d, err := s.Diff(ctx, cp.Checkpoint.ID, "")
	if err != nil || len(d.Changes) != 0 {
		t.Fatalf("after the rewind the diff shows %+v, %v; want no change", d, err)
	}
}
