package hook

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// Which folder is the workspace, one rule for every entry point (the guard that hooks run, the
// MCP server, the CLI): each lists the places a workspace may come from, most deliberate first,
// and Choose takes the first that names a folder. A folder stands for its project: the nearest
// folder at or above it that has a store, else the top level of the repository it is in, else
// (for most sources) itself. So a session started in a subfolder of a repository protects the
// repository, whether its folder came from a plugin's --workspace ${CLAUDE_PROJECT_DIR}, from
// CLAUDE_PROJECT_DIR, from the hook input's cwd or from the working directory. A person who
// wants a subfolder alone says so once (--exact-workspace): its store, nearest from then on,
// makes every entry point choose it. Folders that are clearly not a project (the filesystem root,
// the home folder, agents' own folders, plugin caches) are skipped on the way up and refused as
// the answer: agents start hooks and servers in folders nobody chose, so no entry point takes
// its working directory on trust.

// Source is one place a workspace may come from.
type Source struct {
	Rule   string // as messages name it: "--workspace", "CLAUDE_PROJECT_DIR", "roots/list", ...
	Folder string // "" when this source names nothing
	// Exact uses Folder itself, even when it is not a project (--exact-workspace: a person's
	// deliberate choice); otherwise Folder stands for its project.
	Exact bool
	// OrItself uses Folder itself when no enclosing folder holds a store or a repository (a folder
	// the client named, or a person's working directory); without it, that is "no workspace".
	OrItself bool
}

// How a source's folder led to the root (Choice.By).
const (
	ByStore      = "store"      // the nearest folder at or above it that has a store
	ByRepository = "repository" // the top level of the repository it is in
	ByItself     = "itself"     // no store or repository at or above it
	ByExact      = "exact"      // --exact-workspace: the folder itself
)

// Choice is the chosen workspace root, the rule that chose it and how.
type Choice struct {
	Root string // absolute, symlinks resolved
	Rule string
	// Folder is the folder the rule named (absolute, symlinks resolved), and By how it led to
	// Root (ByStore, ByRepository, ByItself, ByExact).
	Folder, By string
	// seen holds the store lookups made while choosing, for NestedWorktree and Workspace: a
	// hook looks each folder's store up once.
	seen probes
}

// Why says in words which rule chose the root and how, for logs and notes:
// "--workspace /r/sub, in the repository /r".
func (c Choice) Why() string {
	w := c.Rule
	if c.Folder != "" {
		w += " " + c.Folder
	}
	switch {
	case c.By == ByExact:
		return w + ", exactly (--exact-workspace)"
	case c.Folder == c.Root && c.By == ByStore:
		return w + ", which has a store"
	case c.Folder == c.Root && c.By == ByRepository:
		return w + ", a repository's top level"
	case c.By == ByStore:
		return w + ", in " + c.Root + ", which has a store"
	case c.By == ByRepository:
		return w + ", in the repository " + c.Root
	case c.By == ByItself:
		return w + ", in no store or repository"
	}
	return w
}

// Report is a Choice as --json outputs show it ("workspaceChoice"), so that what an entry
// point chose can be checked from outside.
type Report struct {
	Root   string `json:"root"`   // the workspace chosen
	Rule   string `json:"rule"`   // the source that named a folder: "--workspace", "the working directory", ...
	Folder string `json:"folder"` // the folder it named
	By     string `json:"by"`     // how that folder led to root: store, repository, itself or exact
	Why    string `json:"why"`    // the same in words
}

// Report returns the choice as --json shows it.
func (c Choice) Report() *Report {
	return &Report{Root: c.Root, Rule: c.Rule, Folder: c.Folder, By: c.By, Why: c.Why()}
}

// FlagSource is the --workspace source every entry point puts first: the flag's folder (see
// ExplicitWorkspace), standing for its project.
func FlagSource(set bool, flag, abs string) Source {
	return Source{Rule: "--workspace", Folder: ExplicitWorkspace(set, flag, abs), OrItself: true}
}

// Exactly makes every source exact when exact is set (--exact-workspace): whichever names the
// folder, the folder itself is the workspace.
func Exactly(sources []Source, exact bool) []Source {
	for i := range sources {
		sources[i].Exact = sources[i].Exact || exact
	}
	return sources
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
// that are clearly not a project (see notAProject), unless the source is exact; hint says what
// to configure.
func Choose(sources []Source, hint string) (Choice, error) {
	seen := probes{}
	np := newNotAProject()
	for _, s := range sources {
		if s.Folder == "" {
			continue
		}
		ws, err := workspace.At(s.Folder)
		if err != nil {
			return Choice{}, fmt.Errorf("%s names %q: %w; %s", s.Rule, s.Folder, err, hint)
		}
		seen.add(ws)
		c := Choice{Root: ws.Root, Rule: s.Rule, Folder: ws.Root, By: ByExact, seen: seen}
		if s.Exact {
			return c, nil
		}
		if c.Root, c.By = seen.enclosingProject(ws.Root, np); c.Root == "" {
			if !s.OrItself {
				return Choice{}, fmt.Errorf("%w: %s %s is in no folder that has an agent-rewind store or a repository (.git); %s", ErrNoWorkspace, s.Rule, ws.Root, hint)
			}
			c.Root, c.By = ws.Root, ByItself
		}
		if why := np.why(c.Root); why != "" {
			return Choice{}, fmt.Errorf("refusing workspace %s (chosen by %s): it is %s, not a project, and agent-rewind would checkpoint and rewind all of it; %s", c.Root, c.Why(), why, hint)
		}
		return c, nil
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
	p, by := c.seen.enclosingProject(ws.Root, newNotAProject())
	if p == "" || p == c.Root || !strings.HasPrefix(p, c.Root+string(filepath.Separator)) {
		return c
	}
	if st, err := os.Lstat(filepath.Join(p, ".git")); err != nil || !st.Mode().IsRegular() {
		return c // a store or a repository of its own, not a worktree of the chosen one
	}
	return Choice{Root: p, Rule: "the git worktree the hook input's folder is in (inside " + c.Root + ")", Folder: ws.Root, By: by, seen: c.seen}
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

// enclosingProject returns the nearest folder at or above dir that holds a store (by
// ByStore), or else is a repository's top level (has .git, a folder or a worktree's file: by
// ByRepository); "" when none does. Folders that are not a project are passed over: a home
// folder kept in git, or a store someone made for it, does not swallow every folder under it.
func (p probes) enclosingProject(dir string, np notAProject) (string, string) {
	for d := dir; ; {
		if np.why(d) == "" {
			if p.hasStore(d) {
				return d, ByStore
			}
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				return d, ByRepository
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
		}
		d = parent
	}
}

// agentFolders are the folders under the home folder where agents keep their own files
// (settings, plugin caches, user-level hooks): never a project.
var agentFolders = []string{".claude", ".cursor", ".codex", ".gemini", ".codeium", ".windsurf", ".vscode", ".vscode-server", ".cline"}

// notAProject knows the folders that are clearly not a project: the filesystem root, the home
// folder and the folders that hold it (/home, /Users), an agent's own folder under it, or a
// Claude Code plugin cache wherever CLAUDE_CONFIG_DIR puts it. home is the home folder, symlinks
// resolved ("" when unknown).
type notAProject struct{ home string }

// newNotAProject resolves the home folder once, for every folder one choice looks at.
func newNotAProject() notAProject {
	home, err := os.UserHomeDir()
	if err != nil {
		return notAProject{}
	}
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	return notAProject{home}
}

// why says why dir is clearly not a project ("" when it may be one).
func (np notAProject) why(dir string) string {
	if filepath.Dir(dir) == dir {
		return "the filesystem root"
	}
	if strings.Contains(filepath.ToSlash(dir)+"/", "/plugins/cache/") {
		return "a plugin cache (Claude Code starts a user-scope plugin's MCP server there)"
	}
	if np.home == "" {
		return ""
	}
	if dir == np.home {
		return "the home folder"
	}
	if strings.HasPrefix(np.home, dir+string(filepath.Separator)) {
		return "a folder that holds the home folder " + np.home
	}
	for _, name := range agentFolders {
		f := filepath.Join(np.home, name)
		if dir == f || strings.HasPrefix(dir, f+string(filepath.Separator)) {
			return "inside " + f + ", an agent's own folder"
		}
	}
	return ""
}
