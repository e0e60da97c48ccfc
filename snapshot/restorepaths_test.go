package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRestorePathsChangesOnlyChosen restores one file and one folder from an old checkpoint:
// exactly those change (a deleted file back, a file the checkpoint lacks deleted, a mode), every
// other path and the position stay, a safety checkpoint holds the state before, and the chain
// gets a "restore" entry.
func TestRestorePathsChangesOnlyChosen(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	chain := &chainLog{}
	s := mustOpen(t, root, Options{Recorder: chain})
	a, err := s.Checkpoint(ctx, "start")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, root, `
		echo changed > README.md
		echo changed > src/main.go
		echo new > src/util/new.go
		chmod 600 bin/run.sh
		rm docs/old.txt
	`)
	b, err := s.Checkpoint(ctx, "work")
	if err != nil {
		t.Fatal(err)
	}
	before := readState(t, root)
	dry, err := s.RestorePaths(ctx, a.ID[:6], []string{"src/util", "docs/old.txt"}, RestoreOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffStates(before, readState(t, root)); d != "" || len(dry.Changes) != 2 {
		t.Fatalf("dry run: changes %+v, workspace changed: %s", dry.Changes, d)
	}
	res, err := s.RestorePaths(ctx, a.ID, []string{"src/util", "docs/old.txt", "bin/run.sh"}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := readState(t, root)
	want := maps(before)
	delete(want, "src/util/new.go")
	orig := map[string]string{}
	s2 := t.TempDir()
	baseTree(t, s2)
	for p, v := range readState(t, s2) {
		orig[p] = v
	}
	want["docs/old.txt"], want["bin/run.sh"] = orig["docs/old.txt"], orig["bin/run.sh"]
	if d := diffStates(want, after); d != "" {
		t.Fatalf("after restore: %s", d)
	}
	if len(res.Changes) != 3 || res.Op != "restore" || res.To != a.ID || res.Safety != b.ID || res.SafetyCreated {
		t.Fatalf("result: %+v", res)
	}
	if cur, _ := s.Current(); cur != b.ID {
		t.Fatalf("position moved to %s, want %s", cur, b.ID)
	}
	if k := chain.kinds(); k[len(k)-1] != "restore" {
		t.Fatalf("chain kinds %v, want a restore last", k)
	}
	// The stat cache must not vouch for the old content of a restored file.
	d, err := s.Diff(ctx, b.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range d.Changes {
		paths = append(paths, c.Path)
	}
	if !slices.Equal(paths, []string{"bin/run.sh", "docs/old.txt", "src/util/new.go"}) {
		t.Fatalf("diff after restore: %v", paths)
	}
}

func maps(s state) state {
	out := state{}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// TestRestorePathsSafetyCheckpointKeepsPosition: with unsaved changes a safety checkpoint is
// made, and the position still names the checkpoint the workspace was at.
func TestRestorePathsSafetyCheckpointKeepsPosition(t *testing.T) {
	root := t.TempDir()
	put(t, root, "a.txt", "one\n", 0o644)
	put(t, root, "b.txt", "one\n", 0o644)
	s := mustOpen(t, root, Options{})
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "a.txt", "two\n", 0o644)
	put(t, root, "b.txt", "two\n", 0o644)
	res, err := s.RestorePaths(ctx, a.ID, []string{"a.txt"}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.SafetyCreated || res.Safety == a.ID {
		t.Fatalf("no safety checkpoint: %+v", res)
	}
	if cur, _ := s.Current(); cur != a.ID {
		t.Fatalf("position %s, want %s", cur, a.ID)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "one\n" {
		t.Fatalf("a.txt = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(got) != "two\n" {
		t.Fatalf("b.txt = %q, want untouched", got)
	}
	safe, err := s.Entries(res.Safety)
	if err != nil || !slices.ContainsFunc(safe, func(e Entry) bool { return e.Path == "a.txt" && e.Size == 4 }) {
		t.Fatalf("safety checkpoint lacks the state before: %v", err)
	}
}

// TestRestorePathsRefusesUnsafe: paths outside the workspace, into the store, unknown, or through
// a symlink are refused and nothing changes.
func TestRestorePathsRefusesUnsafe(t *testing.T) {
	root := t.TempDir()
	put(t, root, "dir/f.txt", "one\n", 0o644)
	outside := t.TempDir()
	s := mustOpen(t, root, Options{})
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../x", "/etc/passwd", "dir/../../x", "", ".rewind", ".rewind/position", "dir//f.txt"} {
		if _, err := s.RestorePaths(ctx, a.ID, []string{p}, RestoreOptions{}); !errors.Is(err, ErrUnsafePath) {
			t.Errorf("restore %q: %v, want ErrUnsafePath", p, err)
		}
	}
	if _, err := s.RestorePaths(ctx, a.ID, []string{"nope"}, RestoreOptions{}); !errors.Is(err, ErrNoSuchPath) || errors.Is(err, ErrNotFound) {
		t.Errorf("unknown path: %v, want ErrNoSuchPath (not ErrNotFound: the checkpoint exists)", err)
	}
	// dir replaced by a symlink to a folder outside: restoring dir/f.txt must not write there.
	os.RemoveAll(filepath.Join(root, "dir"))
	symlink(t, outside, filepath.Join(root, "dir"))
	before := readState(t, root)
	if _, err := s.RestorePaths(ctx, a.ID, []string{"dir/f.txt"}, RestoreOptions{}); !errors.Is(err, ErrUnsafePath) {
		t.Errorf("through a symlink: %v, want ErrUnsafePath", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the workspace: %v", ents)
	}
	if d := diffStates(before, readState(t, root)); d != "" {
		t.Fatalf("workspace changed: %s", d)
	}
	if cur, _ := s.Current(); cur != a.ID {
		// the safety checkpoint of the refused restore must not move the position
		t.Fatalf("position %s, want %s", cur, a.ID)
	}
}

// TestGCKeepsLastRestoreSafety: the safety checkpoint of the last restore of paths holds the only
// copy of what those paths held; GC keeps it as it keeps the last rewind's.
func TestGCKeepsLastRestoreSafety(t *testing.T) {
	root := t.TempDir()
	put(t, root, "a.txt", "one\n", 0o644)
	s := mustOpen(t, root, Options{})
	a, err := s.Checkpoint(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "a.txt", "two\n", 0o644)
	res, err := s.RestorePaths(ctx, a.ID, []string{"a.txt"}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tl, err := s.List(); err != nil || tl.LastRestore == nil || tl.LastRestore.Safety != res.Safety || tl.LastRestore.To != a.ID {
		t.Fatalf("timeline's last restore: %+v, %v", tl.LastRestore, err)
	}
	put(t, root, "b.txt", "new\n", 0o644)
	if _, err := s.Checkpoint(ctx, "later"); err != nil {
		t.Fatal(err)
	}
	gc, err := s.GC(ctx, GCOptions{KeepLast: 1})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(gc.Removed, res.Safety) || !slices.Contains(gc.Protected, res.Safety) {
		t.Fatalf("GC removed %v, protected %v: the last restore's safety checkpoint %s must be kept", gc.Removed, gc.Protected, res.Safety)
	}
	if _, err := s.Entries(res.Safety); err != nil {
		t.Fatal(err)
	}
}
