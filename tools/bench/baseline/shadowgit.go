package baseline

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// ShadowGit is a git repository kept outside a workspace that checkpoints it.
type ShadowGit struct {
	GitDir   string // the repository (GIT_DIR), outside the work tree
	WorkTree string // the workspace (GIT_WORK_TREE)
	git      string
}

// gitConfig is passed with -c to every git command: a committer, and nothing running behind the
// measurement's back.
var gitConfig = []string{
	"user.name=agent-rewind bench", "user.email=bench@localhost", "commit.gpgsign=false",
	"gc.auto=0", "maintenance.auto=false", "core.fsmonitor=false",
}

// InitShadowGit creates an empty shadow repository at gitDir (which must not exist yet) for the
// work tree, ignoring the work-tree paths named in exclude (gitignore patterns, for example
// "/.rewind/").
func InitShadowGit(ctx context.Context, gitDir, workTree string, exclude ...string) (*ShadowGit, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("shadow git: git is not on PATH (install git to measure the shadow-git baseline): %w", err)
	}
	if _, err := os.Lstat(gitDir); err == nil {
		return nil, fmt.Errorf("shadow git: %s already exists (choose a new directory)", gitDir)
	}
	g := &ShadowGit{GitDir: gitDir, WorkTree: workTree, git: git}
	if _, err := measure.Run(g.command(ctx, "init", "--quiet")); err != nil {
		return nil, fmt.Errorf("shadow git: %w", err)
	}
	if len(exclude) > 0 {
		p := filepath.Join(gitDir, "info", "exclude")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(strings.Join(exclude, "\n")+"\n"), 0o644); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// command returns a git command on the shadow repository.
func (g *ShadowGit) command(ctx context.Context, args ...string) *exec.Cmd {
	full := make([]string, 0, 2*len(gitConfig)+len(args))
	for _, c := range gitConfig {
		full = append(full, "-c", c)
	}
	cmd := exec.CommandContext(ctx, g.git, append(full, args...)...)
	cmd.Dir = g.WorkTree
	cmd.Env = append(os.Environ(),
		"GIT_DIR="+g.GitDir, "GIT_WORK_TREE="+g.WorkTree,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
	)
	return cmd
}

// sequence runs the git commands one after another and returns their total wall time and the
// largest peak RSS among them.
func (g *ShadowGit) sequence(ctx context.Context, cmds ...[]string) (measure.Sample, error) {
	var s measure.Sample
	start := time.Now()
	for _, args := range cmds {
		r, err := measure.Run(g.command(ctx, args...))
		if err != nil {
			return s, fmt.Errorf("shadow git: %w", err)
		}
		s.MaxRSS = max(s.MaxRSS, r.MaxRSS)
	}
	s.Wall = time.Since(start)
	return s, nil
}

// Checkpoint runs "git add -A && git commit -q -m checkpoint" (an empty commit is allowed, so a
// checkpoint with no change is measured too) and reports its wall time and peak RSS.
func (g *ShadowGit) Checkpoint(ctx context.Context) (measure.Sample, error) {
	return g.sequence(ctx, []string{"add", "-A"}, []string{"commit", "-q", "--allow-empty", "--no-verify", "-m", "checkpoint"})
}

// Restore runs "git reset -q --hard <rev> && git clean -fdq" and reports its wall time and peak
// RSS. Excluded paths survive it: clean without -x leaves ignored files alone.
func (g *ShadowGit) Restore(ctx context.Context, rev string) (measure.Sample, error) {
	return g.sequence(ctx, []string{"reset", "-q", "--hard", rev}, []string{"clean", "-fdq"})
}

// Head returns the commit the repository is at.
func (g *ShadowGit) Head(ctx context.Context) (string, error) {
	r, err := measure.Run(g.command(ctx, "rev-parse", "HEAD"))
	if err != nil {
		return "", fmt.Errorf("shadow git: %w", err)
	}
	return strings.TrimSpace(string(r.Stdout)), nil
}

// Size returns the bytes stored in the repository (see DirBytes).
func (g *ShadowGit) Size() (int64, error) { return DirBytes(g.GitDir) }

// Remove deletes the repository (not the work tree).
func (g *ShadowGit) Remove() error { return os.RemoveAll(g.GitDir) }
