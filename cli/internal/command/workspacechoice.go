package command

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// Which folder is the workspace: the guard (hooks) and the MCP server are started by agents in
// folders nobody chose (a plugin cache, the home folder, "/"), so they do not take their working
// directory on trust. Each lists the places a workspace may come from, most deliberate first;
// chooseWorkspace takes the first that names a folder, and says which rule chose it.

// workspaceSource is one place a workspace may come from.
type workspaceSource struct {
	rule   string // as messages name it: "--workspace", "CLAUDE_PROJECT_DIR", "roots/list", ...
	folder string // "" when this source names nothing
	// exact uses folder itself (the flag); otherwise the nearest enclosing project of folder.
	exact bool
	// orItself uses folder itself when no enclosing folder holds a store or a repository (a folder
	// the client named, or a person's working directory); without it, that is "no workspace".
	orItself bool
}

// workspaceChoice is the chosen workspace root and the rule that chose it.
type workspaceChoice struct {
	root string // absolute, symlinks resolved
	rule string
}

// errNoWorkspace reports that no source named a usable workspace.
var errNoWorkspace = errors.New("no workspace")

// chooseWorkspace returns the workspace of the first source that names a folder. It refuses
// folders that are clearly not a project (see notAProject); hint says what to configure.
func chooseWorkspace(sources []workspaceSource, hint string) (workspaceChoice, error) {
	for _, s := range sources {
		if s.folder == "" {
			continue
		}
		ws, err := workspace.At(s.folder)
		if err != nil {
			return workspaceChoice{}, fmt.Errorf("%s names %q: %w; %s", s.rule, s.folder, err, hint)
		}
		root := ws.Root
		if !s.exact {
			if p := enclosingProject(root); p != "" {
				root = p
			} else if !s.orItself {
				return workspaceChoice{}, fmt.Errorf("%w: %s %s is in no folder that has an agent-rewind store or a repository (.git); %s", errNoWorkspace, s.rule, root, hint)
			}
		}
		if why := notAProject(root); why != "" {
			return workspaceChoice{}, fmt.Errorf("refusing workspace %s (chosen by %s): it is %s, not a project, and agent-rewind would checkpoint and rewind all of it; %s", root, s.rule, why, hint)
		}
		return workspaceChoice{root: root, rule: s.rule}, nil
	}
	return workspaceChoice{}, fmt.Errorf("%w: nothing names the project folder; %s", errNoWorkspace, hint)
}

// nestedWorktree refines a chosen workspace by the folder a hook input names: when that folder
// lies in a linked git worktree nested inside the chosen root (Claude Code's worktree sessions
// work in <project>/.claude/worktrees/<name> while CLAUDE_PROJECT_DIR stays at the project),
// the worktree is the workspace: its files are the ones the agent changes.
func nestedWorktree(c workspaceChoice, folder string) workspaceChoice {
	if folder == "" {
		return c
	}
	ws, err := workspace.At(folder)
	if err != nil {
		return c
	}
	p := enclosingProject(ws.Root)
	if p == "" || p == c.root || !strings.HasPrefix(p, c.root+string(filepath.Separator)) {
		return c
	}
	if st, err := os.Lstat(filepath.Join(p, ".git")); err != nil || !st.Mode().IsRegular() {
		return c // a store or a repository of its own, not a worktree of the chosen one
	}
	return workspaceChoice{root: p, rule: "the git worktree the hook input's folder is in (inside " + c.rule + ")"}
}

// explicitWorkspace is the --workspace folder (absolute, as kong made it) when the flag was given
// a value, "" when it was not given, given empty, or given a variable the client did not
// substitute (see unsubstituted).
func explicitWorkspace(env *Env) string {
	if env.WorkspaceSet && env.WorkspaceFlag != "" && !unsubstituted(env.WorkspaceFlag) {
		return env.Workspace
	}
	return ""
}

// ignoredWorkspaceFlag says why a given --workspace is ignored ("" when it is not): empty (a
// shell variable that was not set; PowerShell expands "$CLAUDE_PROJECT_DIR" to nothing) or a
// ${VAR} the client left as it was (a client version without that substitution).
func ignoredWorkspaceFlag(env *Env) string {
	switch {
	case !env.WorkspaceSet:
		return ""
	case env.WorkspaceFlag == "":
		return "--workspace is empty (an unset variable, such as $CLAUDE_PROJECT_DIR under PowerShell?), so it is ignored"
	case unsubstituted(env.WorkspaceFlag):
		return fmt.Sprintf("--workspace is %q: the client did not substitute that variable, so it is ignored", env.WorkspaceFlag)
	}
	return ""
}

// unsubstituted reports whether v is a lone variable reference, $NAME or ${NAME}: no folder is
// named that way on purpose.
func unsubstituted(v string) bool {
	name, ok := strings.CutPrefix(v, "$")
	if !ok {
		return false
	}
	if inner, ok := strings.CutPrefix(name, "{"); ok {
		name, ok = strings.CutSuffix(inner, "}")
		if !ok {
			return false
		}
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9' || r == ':') {
			return false
		}
	}
	return name != ""
}

// enclosingProject returns the nearest folder at or above dir that holds a store, or else is a
// repository's top level (has .git, a folder or a worktree's file); "" when none does.
func enclosingProject(dir string) string {
	for d := dir; ; {
		if hasStore(d) {
			return d
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// hasStore reports whether dir is a workspace root that already has its store (in the state
// folder, found by the folder's identity, or a legacy .rewind/ that its first command moves).
func hasStore(dir string) bool { return workspace.HasStore(dir) }

// agentFolders are the folders under the home folder where agents keep their own files
// (settings, plugin caches, user-level hooks): never a project.
var agentFolders = []string{".claude", ".cursor", ".codex", ".gemini", ".codeium", ".windsurf", ".vscode", ".vscode-server", ".cline"}

// notAProject says why dir is clearly not a project ("" when it may be one): the filesystem
// root, the home folder, an agent's own folder under it, or a Claude Code plugin cache wherever
// CLAUDE_CONFIG_DIR puts it.
func notAProject(dir string) string {
	if filepath.Dir(dir) == dir {
		return "the filesystem root"
	}
	if strings.Contains(filepath.ToSlash(dir)+"/", "/plugins/cache/") {
		return "a plugin cache (Claude Code starts a user-scope plugin's MCP server there)"
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	if dir == home {
		return "the home folder"
	}
	for _, name := range agentFolders {
		f := filepath.Join(home, name)
		if dir == f || strings.HasPrefix(dir, f+string(filepath.Separator)) {
			return "inside " + f + ", an agent's own folder"
		}
	}
	return ""
}
