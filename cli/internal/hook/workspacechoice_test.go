package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnsubstituted(t *testing.T) {
	for v, want := range map[string]bool{
		"${CLAUDE_PROJECT_DIR}": true, "$CLAUDE_PROJECT_DIR": true, "${workspaceFolder}": true, "${env:PROJECT}": true,
		"/home/u/p": false, "$HOME/p": false, "${X": false, "$": false, "${}": false, "": false, "./$x": false,
	} {
		if got := unsubstituted(v); got != want {
			t.Errorf("unsubstituted(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestChooseWorkspace(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	repo := t.TempDir()
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	bare := t.TempDir()
	cache := filepath.Join(home, ".claude", "plugins", "cache", "m", "p", "1.0.0")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	// A home folder kept in git: the folders under it that are in no repository of their own
	// are not swallowed by it.
	notes := filepath.Join(home, "notes")
	for _, d := range []string{filepath.Join(home, ".git"), notes} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	flag := func(dir string, exact bool) Source { return Exactly([]Source{FlagSource(true, dir, dir)}, exact)[0] }
	for _, c := range []struct {
		name     string
		sources  []Source
		root, by string
		rule     string
		err      string
	}{
		{"flag stands for its repository", []Source{flag(sub, false), {Rule: "x", Folder: bare}}, repo, ByRepository, "--workspace", ""},
		{"flag at the top level", []Source{flag(repo, false)}, repo, ByRepository, "--workspace", ""},
		{"exact flag", []Source{flag(sub, true), {Rule: "x", Folder: repo}}, sub, ByExact, "--workspace", ""},
		{"empty sources are skipped", []Source{FlagSource(true, "", sub), {Rule: "input", Folder: sub, OrItself: true}}, repo, ByRepository, "input", ""},
		{"unsubstituted flag is skipped", []Source{FlagSource(true, "${CLAUDE_PROJECT_DIR}", sub), {Rule: "input", Folder: bare, OrItself: true}}, bare, ByItself, "input", ""},
		{"no project, no fallback", []Source{{Rule: "the working directory", Folder: bare}}, "", "", "", "no workspace"},
		{"no project, the folder itself", []Source{{Rule: "input", Folder: bare, OrItself: true}}, bare, ByItself, "input", ""},
		{"a home kept in git is passed over", []Source{{Rule: "the working directory", Folder: notes, OrItself: true}}, notes, ByItself, "the working directory", ""},
		{"home", []Source{{Rule: "the working directory", Folder: home, OrItself: true}}, "", "", "", "the home folder"},
		{"what holds the home folder", []Source{{Rule: "the working directory", Folder: filepath.Dir(home), OrItself: true}}, "", "", "", "a folder that holds the home folder"},
		{"home by the flag", []Source{flag(home, false)}, "", "", "", "the home folder"},
		{"home, exactly", []Source{flag(home, true)}, home, ByExact, "--workspace", ""},
		{"plugin cache", []Source{{Rule: "the working directory", Folder: cache, OrItself: true}}, "", "", "", "a plugin cache"},
		{"agent folder", []Source{flag(filepath.Join(home, ".claude"), false)}, "", "", "", "an agent's own folder"},
		{"root", []Source{{Rule: "input", Folder: "/", OrItself: true}}, "", "", "", "the filesystem root"},
		{"missing folder", []Source{{Rule: "input", Folder: filepath.Join(bare, "gone"), OrItself: true}}, "", "", "", "input names"},
		{"nothing", nil, "", "", "", "nothing names the project folder"},
	} {
		got, err := Choose(c.sources, "HINT")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "HINT") {
				t.Errorf("%s: %+v, %v; want error %q with the hint", c.name, got, err, c.err)
			}
			continue
		}
		want, _ := filepath.EvalSymlinks(c.root)
		if err != nil || got.Root != want || got.Rule != c.rule || got.By != c.by {
			t.Errorf("%s: %+v, %v; want %s by %s (%s)", c.name, got, err, want, c.rule, c.by)
		}
	}
}

// TestChoiceWhy: the words every entry point logs for its choice name the rule, the folder it
// named and how that led to the root.
func TestChoiceWhy(t *testing.T) {
	for _, c := range []struct {
		choice Choice
		want   string
	}{
		{Choice{Root: "/r", Rule: "--workspace", Folder: "/r/sub", By: ByRepository}, "--workspace /r/sub, in the repository /r"},
		{Choice{Root: "/r", Rule: "CLAUDE_PROJECT_DIR", Folder: "/r", By: ByRepository}, "CLAUDE_PROJECT_DIR /r, a repository's top level"},
		{Choice{Root: "/r", Rule: "the working directory", Folder: "/r/a", By: ByStore}, "the working directory /r/a, in /r, which has a store"},
		{Choice{Root: "/r/a", Rule: "the working directory", Folder: "/r/a", By: ByStore}, "the working directory /r/a, which has a store"},
		{Choice{Root: "/x", Rule: "the working directory", Folder: "/x", By: ByItself}, "the working directory /x, in no store or repository"},
		{Choice{Root: "/r/sub", Rule: "--workspace", Folder: "/r/sub", By: ByExact}, "--workspace /r/sub, exactly (--exact-workspace)"},
	} {
		if got := c.choice.Why(); got != c.want {
			t.Errorf("Why() = %q, want %q", got, c.want)
		}
		if r := c.choice.Report(); r.Root != c.choice.Root || r.By != c.choice.By || r.Why != c.want || r.Folder != c.choice.Folder {
			t.Errorf("Report() = %+v", r)
		}
	}
}
