package walk

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ignoreCases: a .rewindignore, then paths (a trailing "/" marks a directory) and whether each is
// excluded (through a parent too: Excluded). When git is installed the same table is checked
// against `git check-ignore`, so the expectations are git's, not ours.
var ignoreCases = []struct {
	rules string
	paths map[string]bool
}{
	{"*.log", map[string]bool{"a.log": true, "x/b.log": true, "a.logx": false, "log": false}},
	{"*.log\n!keep.log", map[string]bool{"a.log": true, "keep.log": false, "x/keep.log": false}},
	{"build/", map[string]bool{"build/": true, "build": false, "src/build/": true, "build/x.o": true}},
	{"/build", map[string]bool{"build": true, "build/": true, "src/build/": false, "src/build": false}},
	{"doc/frotz", map[string]bool{"doc/frotz": true, "a/doc/frotz": false, "doc/frotz/": true}},
	{"doc/frotz/", map[string]bool{"doc/frotz/": true, "doc/frotz": false}},
	{"frotz/", map[string]bool{"frotz/": true, "a/frotz/": true, "a/frotz": false}},
	{"**/foo", map[string]bool{"foo": true, "a/foo": true, "a/b/foo/": true, "foox": false}},
	{"**/foo/bar", map[string]bool{"foo/bar": true, "x/foo/bar": true, "x/foo/baz": false}},
	{"abc/**", map[string]bool{"abc/x": true, "abc/x/y": true, "abc/": false, "abc": false, "x/abc/y": false}},
	{"a/**/b", map[string]bool{"a/b": true, "a/x/b": true, "a/x/y/b": true, "a/x/c": false, "b": false}},
	{"node_modules\n!node_modules/keep", map[string]bool{"node_modules/": true, "node_modules/keep": true}},
	{"dir/*\n!dir/keep", map[string]bool{"dir/a": true, "dir/keep": false, "dir/": false}},
	{"*.[oa]", map[string]bool{"x.o": true, "x.a": true, "x.c": false}},
	{"x[!a-c]y", map[string]bool{"xdy": true, "xby": false}},
	{"x[^a-c]y", map[string]bool{"xdy": true, "xby": false}},
	{"?.txt", map[string]bool{"a.txt": true, "ab.txt": false}},
	{"# comment\n\n\\#hash", map[string]bool{"#hash": true, "# comment": false}},
	{"\\!bang", map[string]bool{"!bang": true, "bang": false}},
	{"trail \ntrail2\\ ", map[string]bool{"trail": true, "trail ": false, "trail2 ": true}},
	{"a*b", map[string]bool{"ab": true, "axxb": true, "a/b": false, "axb/c": true}},
	{"*", map[string]bool{"x": true, "d/": true, "d/e": true}},
	{"*/", map[string]bool{"x": false, "d/": true, "d/e": true}},
	{"/*.c", map[string]bool{"cat.c": true, "mozilla/cat.c": false}},
	{"foo/**/", map[string]bool{"foo/x/": true, "foo/x": false, "foo/x/y": true}},
	{"a\\*c", map[string]bool{"a*c": true, "abc": false}},
	{"[", map[string]bool{"[": false, "x": false}},
}

func TestIgnoreTable(t *testing.T) {
	for _, tc := range ignoreCases {
		m := ParseIgnore([]byte(tc.rules))
		for p, want := range tc.paths {
			isDir := strings.HasSuffix(p, "/")
			if got := m.Excluded(strings.TrimSuffix(p, "/"), isDir); got != want {
				t.Errorf("rules %q, path %q: excluded %v, want %v", tc.rules, p, got, want)
			}
		}
	}
}

// TestIgnoreAgreesWithGit checks the table against git's own matcher.
func TestIgnoreAgreesWithGit(t *testing.T) {
	git := needTool(t, "git")
	for _, tc := range ignoreCases {
		dir := t.TempDir()
		sh(t, dir, "git init -q .")
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(tc.rules), 0o644)
		for p, want := range tc.paths {
			// check-ignore tells a directory by the file system: make one when the case needs it.
			rel := strings.TrimSuffix(p, "/")
			if strings.HasSuffix(p, "/") {
				os.MkdirAll(filepath.Join(dir, rel), 0o755)
			}
			cmd := exec.Command(git, "check-ignore", "-q", "--no-index", "--", rel)
			cmd.Dir = dir
			err := cmd.Run()
			got := err == nil
			if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
				t.Fatalf("git check-ignore %q: %v", rel, err)
			}
			if got != want {
				t.Errorf("git disagrees with the table: rules %q, path %q: git says excluded=%v", tc.rules, p, got)
			}
			if strings.HasSuffix(p, "/") {
				os.RemoveAll(filepath.Join(dir, rel))
			}
		}
	}
}

func FuzzIgnore(f *testing.F) {
	for _, tc := range ignoreCases {
		for p := range tc.paths {
			f.Add(tc.rules, p)
		}
	}
	f.Add("[[:alpha:]]\n**/**/x/**", "a/b/x/c")
	f.Fuzz(func(t *testing.T, rules, path string) {
		m := ParseIgnore([]byte(rules))
		m.Excluded(path, false)
		m.Excluded(path, true)
		// A path is never excluded by rules that exclude nothing.
		if ParseIgnore(nil).Excluded(path, true) {
			t.Fatal("empty rules excluded a path")
		}
	})
}
