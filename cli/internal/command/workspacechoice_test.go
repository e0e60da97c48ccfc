package command

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
		sources []workspaceSource
		root    string
		rule    string
		err     string
	}{
		{"flag is exact", []workspaceSource{{rule: "--workspace", folder: sub, exact: true}, {rule: "x", folder: repo}}, sub, "--workspace", ""},
		{"empty sources are skipped", []workspaceSource{{rule: "--workspace", exact: true}, {rule: "input", folder: sub, orItself: true}}, repo, "input", ""},
		{"no project, no fallback", []workspaceSource{{rule: "the working directory", folder: bare}}, "", "", "no workspace"},
		{"no project, the folder itself", []workspaceSource{{rule: "input", folder: bare, orItself: true}}, bare, "input", ""},
		{"home", []workspaceSource{{rule: "the working directory", folder: home, orItself: true}}, "", "", "the home folder"},
		{"plugin cache", []workspaceSource{{rule: "the working directory", folder: cache, orItself: true}}, "", "", "a plugin cache"},
		{"root", []workspaceSource{{rule: "input", folder: "/", orItself: true}}, "", "", "the filesystem root"},
		{"missing folder", []workspaceSource{{rule: "input", folder: filepath.Join(bare, "gone"), orItself: true}}, "", "", "input names"},
		{"nothing", nil, "", "", "nothing names the project folder"},
	} {
		got, err := chooseWorkspace(c.sources, "HINT")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "HINT") {
				t.Errorf("%s: %+v, %v; want error %q with the hint", c.name, got, err, c.err)
			}
			continue
		}
		want, _ := filepath.EvalSymlinks(c.root)
		if err != nil || got.root != want || got.rule != c.rule {
			t.Errorf("%s: %+v, %v; want %s by %s", c.name, got, err, want, c.rule)
		}
	}
}
