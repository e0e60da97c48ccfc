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
	for _, c := range []struct {
		name    string
		sources []Source
		root    string
		rule    string
		err     string
	}{
		{"flag is exact", []Source{{Rule: "--workspace", Folder: sub, Exact: true}, {Rule: "x", Folder: repo}}, sub, "--workspace", ""},
		{"empty sources are skipped", []Source{{Rule: "--workspace", Exact: true}, {Rule: "input", Folder: sub, OrItself: true}}, repo, "input", ""},
		{"no project, no fallback", []Source{{Rule: "the working directory", Folder: bare}}, "", "", "no workspace"},
		{"no project, the folder itself", []Source{{Rule: "input", Folder: bare, OrItself: true}}, bare, "input", ""},
		{"home", []Source{{Rule: "the working directory", Folder: home, OrItself: true}}, "", "", "the home folder"},
		{"plugin cache", []Source{{Rule: "the working directory", Folder: cache, OrItself: true}}, "", "", "a plugin cache"},
		{"root", []Source{{Rule: "input", Folder: "/", OrItself: true}}, "", "", "the filesystem root"},
		{"missing folder", []Source{{Rule: "input", Folder: filepath.Join(bare, "gone"), OrItself: true}}, "", "", "input names"},
		{"nothing", nil, "", "", "nothing names the project folder"},
	} {
		got, err := Choose(c.sources, "HINT")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "HINT") {
				t.Errorf("%s: %+v, %v; want error %q with the hint", c.name, got, err, c.err)
			}
			continue
		}
		want, _ := filepath.EvalSymlinks(c.root)
		if err != nil || got.Root != want || got.Rule != c.rule {
			t.Errorf("%s: %+v, %v; want %s by %s", c.name, got, err, want, c.rule)
		}
	}
}
