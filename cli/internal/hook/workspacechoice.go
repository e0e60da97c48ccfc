package hook

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
// Choose takes the first that names a folder, and says which rule chose it.

// Source is one place a workspace may come from.
type Source struct {
	Rule   string // as messages name it: "--workspace", "CLAUDE_PROJECT_DIR", "roots/list", ...
	Folder string // "" when this source names nothing
	// Exact uses Folder itself (the flag); otherwise the nearest enclosing project of Folder.
	Exact bool
	// OrItself uses Folder itself when no enclosing folder holds a store or a repository (a folder
	// the client named, or a person's working directory); without it, that is "no workspace".
	OrItself bool
}

// Choice is the chosen workspace root and the rule that chose it.
type Choice struct {
	Root string // absolute, symlinks resolved
	Rule string
	// seen holds the store lookups made while choosing, for NestedWorktree and Workspace: a
	// hook looks each folder's store up once.
	seen probes
}

// probes are the store lookups of one choice, by folder.
type probes map[string]probe

type probe struct {
	ws  *workspace.Workspace // nil when the folder could not be taken as a workspace
	has bool
}

// hasStore reports whether dir is a workspace root that already has its store (in the state
// folder, found by the folder's identity, or a legacy .rewind/ that its first command moves).
func (p probes) hasStore(dir string) bool {
	if r, ok := p[dir]; ok {
		return r.has
	}
	ws, has := workspace.Probe(dir)
	p[dir] = probe{ws, has}
	return has
}

// add records the store lookup of ws, a folder a source named and At resolved: it is usually
// the root chosen, so neither the choice nor the open resolves it again.
func (p probes) add(ws *workspace.Workspace) {
	if _, ok := p[ws.Root]; !ok {
		p[ws.Root] = probe{ws, ws.FindStore()}
	}
}

// Workspace returns the chosen root as a workspace, with what choosing it learnt of its store:
// looked is true when its store was looked up (workspace.Probe), has whether one was found;
// ws.OpenStore then uses what that lookup read. Otherwise ws is as workspace.At returns it.
func (c Choice) Workspace() (ws *workspace.Workspace, looked, has bool, err error) {
	if r, ok := c.seen[c.Root]; ok && r.ws != nil {
		delete(c.seen, c.Root) // OpenStore consumes what the lookup read
		return r.ws, true, r.has, nil
	}
	ws, err = workspace.At(c.Root)
	return ws, false, false, err
}

// ErrNoWorkspace reports that no source named a usable workspace.
var ErrNoWorkspace = errors.New("no workspace")

// Choose returns the workspace of the first source that names a folder. It refuses folders
// that are clearly not a project (see notAProject); hint says what to configure.
func Choose(sources []Source, hint string) (Choice, error) {
	seen := probes{}
	for _, s := range sources {
		if s.Folder == "" {
			continue
		}
		ws, err := workspace.At(s.Folder)
		if err != nil {
			return Choice{}, fmt.Errorf("%s names %q: %w; %s", s.Rule, s.Folder, err, hint)
		}
		seen.add(ws)
		root := ws.Root
		if !s.Exact {
			if p := seen.enclosingProject(root); p != "" {
				root = p
			} else if !s.OrItself {
				return Choice{}, fmt.Errorf("%w: %s %s is in no folder that has an agent-rewind store or a repository (.git); %s", ErrNoWorkspace, s.Rule, root, hint)
			}
		}
		if why := notAProject(root); why != "" {
			return Choice{}, fmt.Errorf("refusing workspace %s (chosen by %s): it is %s, not a project, and agent-rewind would checkpoint and rewind all of it; %s", root, s.Rule, why, hint)
		}
		return Choice{Root: root, Rule: s.Rule, seen: seen}, nil
	}
	return Choice{}, fmt.Errorf("%w: nothing names the project folder; %s", ErrNoWorkspace, hint)
}

// NestedWorktree refines a chosen workspace by the folder a hook input names: when that folder
// lies in a linked git worktree nested inside the chosen root (Claude Code's worktree sessions
// work in <project>/.claude/worktrees/<name> while CLAUDE_PROJECT_DIR stays at the project),
// the worktree is the workspace: its files are the ones the agent changes.
func (c Choice) NestedWorktree(folder string) Choice {
	if folder == "" || filepath.Clean(folder) == c.Root {
		return c // the usual case: the input names the root itself, resolved again for nothing
	}
	ws, err := workspace.At(folder)
	if err != nil {
		return c
	}
	if c.seen == nil {
		c.seen = probes{}
	}
	p := c.seen.enclosingProject(ws.Root)
	if p == "" || p == c.Root || !strings.HasPrefix(p, c.Root+string(filepath.Separator)) {
		return c
	}
	if st, err := os.Lstat(filepath.Join(p, ".git")); err != nil || !st.Mode().IsRegular() {
		return c // a store or a repository of its own, not a worktree of the chosen one
	}
	return Choice{Root: p, Rule: "the git worktree the hook input's folder is in (inside " + c.Rule + ")", seen: c.seen}
}

// ExplicitWorkspace is the --workspace folder (abs: absolute, as the command line made it)
// when the flag was given a value, "" when it was not given (set), given empty, or given a
// variable the client did not substitute (see unsubstituted).
func ExplicitWorkspace(set bool, flag, abs string) string {
	if set && flag != "" && !unsubstituted(flag) {
		return abs
	}
	return ""
}

// IgnoredWorkspaceFlag says why a given --workspace is ignored ("" when it is not): empty (a
// shell variable that was not set; PowerShell expands "$CLAUDE_PROJECT_DIR" to nothing) or a
// ${VAR} the client left as it was (a client version without that substitution).
func IgnoredWorkspaceFlag(set bool, flag string) string {
	switch {
	case !set:
		return ""
	case flag == "":
		return "--workspace is empty (an unset variable, such as $CLAUDE_PROJECT_DIR under PowerShell?), so it is ignored"
	case unsubstituted(flag):
		return fmt.Sprintf("--workspace is %q: the client did not substitute that variable, so it is ignored", flag)
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
func (p probes) enclosingProject(dir string) string {
	for d := dir; ; {
		if p.hasStore(d) {
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
