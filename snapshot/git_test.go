package snapshot

import (
	"testing"
)

// TestOwnGitUndone: the workspace's own .git is captured, so an agent's commit, branch switch and
// reset --hard are undone together with the files, and git is consistent afterwards.
func TestOwnGitUndone(t *testing.T) {
	needTool(t, "git")
	root := t.TempDir()
	sh(t, root, `
		git init -q -b main .
		echo one > a.txt && mkdir sub && echo two > sub/b.txt
		git add -A && git commit -qm first
		echo wip > a.txt
	`)
	s := mustOpen(t, root, Options{})
	cp, err := s.Checkpoint(ctx, "before agent")
	if err != nil {
		t.Fatal(err)
	}
	want := readState(t, root)
	sh(t, root, `
		git stash -q
		git checkout -q -b feature
		echo three > c.txt && git add c.txt && git commit -qm second
		git rm -q sub/b.txt && git commit -qm third
		git gc -q --prune=now
		git checkout -q main && git reset -q --hard HEAD
		git branch -D -q feature
	`)
	if _, err := s.Rewind(ctx, cp.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("after rewind:\n%s", d)
	}
	// git agrees: the work-in-progress change is back, the history is as it was.
	sh(t, root, `
		git fsck --no-progress
		test "$(git status --porcelain -- . ':!.rewind')" = " M a.txt"
		test "$(git log --format=%s)" = first
		test "$(git stash list)" = ""
	`)
}
