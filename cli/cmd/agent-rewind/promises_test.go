package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPromisesNameRealTests keeps docs/promises.md honest: every test it names as keeping a
// promise exists somewhere in the repository, so a renamed or deleted test cannot leave a
// promise silently unguarded.
func TestPromisesNameRealTests(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "promises.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(string(doc), -1)
	if len(names) < 20 {
		t.Fatalf("docs/promises.md names %d tests: the page lost its tables", len(names))
	}
	var src strings.Builder
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			src.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !strings.Contains(src.String(), "func "+n[1]+"(") {
			t.Errorf("docs/promises.md names %s, but no test has that name", n[1])
		}
	}
}
