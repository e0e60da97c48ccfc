package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGitWarnings(t *testing.T) {
	root := t.TempDir()
	if w := gitWarnings(root); w != nil {
		t.Fatalf("no .git: %q", w)
	}
	os.Mkdir(filepath.Join(root, ".git"), 0o755)
	if w := gitWarnings(root); w != nil {
		t.Fatalf(".git folder: %q", w)
	}
	os.Remove(filepath.Join(root, ".git"))
	os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: ../main/.git/worktrees/wt\n"), 0o644)
	w := gitWarnings(root)
	if len(w) != 1 || !strings.Contains(w[0], filepath.Join(filepath.Dir(root), "main", ".git", "worktrees", "wt")) || !strings.Contains(w[0], "HEAD, index or branch") {
		t.Fatalf("relative gitdir: %q", w)
	}
	os.WriteFile(filepath.Join(root, ".git"), []byte("not a pointer"), 0o644)
	if w := gitWarnings(root); w != nil {
		t.Fatalf("a .git file that is no pointer: %q", w)
	}
}

// FuzzGitWarnings: a workspace's .git file is outside input; any content is read without panic.
func FuzzGitWarnings(f *testing.F) {
	f.Add([]byte("gitdir: /x/.git/worktrees/a\n"))
	f.Add([]byte("gitdir:"))
	f.Add([]byte("gitdir: \x00\xff"))
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(filepath.Join(root, ".git"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, w := range gitWarnings(root) {
			if !strings.Contains(w, "git worktree or submodule") {
				t.Fatalf("warning %q", w)
			}
		}
	})
}
