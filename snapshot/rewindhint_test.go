package snapshot

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRewindWithWatcherHint: a rewind given a watcher's hint takes its safety checkpoint without
// walking the tree, and still restores byte for byte: the folders it removes and the symlinks it
// replaces, which such a capture has no stat for, are looked at as it goes.
func TestRewindWithWatcherHint(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	s := mustOpen(t, root, Options{StateDir: filepath.Join(t.TempDir(), "store")})
	a, err := s.Checkpoint(ctx, "start")
	if err != nil {
		t.Fatal(err)
	}
	before := readState(t, root)
	sh(t, root, `
		echo new > added.txt
		rm docs/old.txt
		chmod 755 README.md
		ln -sfn README.md link
		mkdir -p fresh/empty
		rmdir empty/inner
		rm src/dangling && ln -s main.go src/dangling
	`)
	after := readState(t, root)
	b, err := s.Checkpoint(ctx, "after")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing changed since b, says the watcher: the safety checkpoint is b, taken without a walk.
	res, err := s.Rewind(ctx, a.ID, RestoreOptions{Changed: &Changed{Since: b.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if w := res.SafetyResult.Walk; w.Mode != "changed" {
		t.Fatalf("the safety checkpoint walked (%+v): the hint was not used", w)
	}
	if res.Safety != b.ID || res.SafetyCreated {
		t.Fatalf("safety %s (created %v), want the unchanged position %s", res.Safety, res.SafetyCreated, b.ID)
	}
	if len(res.Kept) != 0 {
		t.Fatalf("kept %+v: a path the watcher vouched for was not recognised", res.Kept)
	}
	if d := diffStates(before, readState(t, root)); d != "" {
		t.Fatalf("after the rewind the workspace differs from the checkpoint:\n%s", d)
	}

	// A change the hint names is captured; one the watcher missed is never lost: it is left in
	// place (its stat is not the one the stat cache vouched for) or, if the cache's sample
	// caught it, held by the safety checkpoint.
	put(t, root, "added.txt", "again\n", 0o644)
	put(t, root, "README.md", "unseen\n", 0o644)
	res, err = s.Replay(ctx, b.ID, RestoreOptions{Changed: &Changed{Since: a.ID, Paths: []string{"added.txt"}}})
	if err != nil {
		t.Fatal(err)
	}
	if w := res.SafetyResult.Walk; w.Mode != "changed" || w.Paths != 1 {
		t.Fatalf("the safety checkpoint walked (%+v): the hint was not used", w)
	}
	got, _ := os.ReadFile(filepath.Join(root, "README.md"))
	if string(got) != "unseen\n" {
		if _, err := s.Rewind(ctx, res.Safety, RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(root, "README.md")); string(got) != "unseen\n" {
			t.Fatalf("README.md, changed without the watcher seeing it, was lost: %q", got)
		}
		return
	}
	kept := false
	for _, k := range res.Kept {
		kept = kept || (k.Path == "README.md" && k.Live)
	}
	if !kept {
		t.Fatalf("README.md was left alone but not reported: %+v", res.Kept)
	}
	want := after
	delete(want, "README.md")
	now := readState(t, root)
	delete(now, "README.md")
	if d := diffStates(want, now); d != "" {
		t.Fatalf("after the replay the workspace differs from the checkpoint:\n%s", d)
	}
}
