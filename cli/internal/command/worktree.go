package command

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// gitWarnings says what a checkpoint of a git worktree or submodule does not capture. There
// .git is a file ("gitdir: <path>") pointing into another repository's git directory, which
// holds the worktree's HEAD, index and logs; its branches are shared with every other worktree.
// A checkpoint captures the workspace's files and that pointer, not the git directory: writing
// a rewound HEAD or branch into the shared repository could harm the other worktrees.
func gitWarnings(root string) []string {
	name := filepath.Join(root, ".git")
	st, err := os.Lstat(name)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 4096 {
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return nil
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	return []string{fmt.Sprintf("this workspace is a git worktree or submodule: its git directory %s is outside the workspace, "+
		"so this checkpoint holds the files and the .git pointer but not the worktree's HEAD, index or branch "+
		"(they live in the shared repository, which other worktrees use); a rewind restores the files, not the branch: "+
		"check \"git status\" after it and move the branch yourself (git switch, git reset --soft)", filepath.Clean(gitdir))}
}
