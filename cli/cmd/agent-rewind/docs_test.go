package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsLinksResolve keeps the README and the docs pages linked together: every relative link
// names a file that exists, and every #anchor a heading of the page it points into, so moving text
// between pages cannot leave a dead link behind.
func TestDocsLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(root, "integrations", "*", "README.md"))
	pages = append(append(pages, filepath.Join(root, "README.md")), more...)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			checked++
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s: %v", page, target, err)
				continue
			}
			if anchor != "" && !anchors(t, path)[anchor] {
				t.Errorf("%s links to %s: %s has no heading with that anchor", page, target, path)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("checked %d links: the pages lost their links", checked)
	}
}

// anchors returns the GitHub anchors of a Markdown file's headings (outside code blocks).
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	out := map[string]bool{}
	fence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
	}
	return out
}

// TestHelpNamesItsDocs: --help points each command at the docs page with its details, and every
// page it names exists.
func TestHelpNamesItsDocs(t *testing.T) {
	r := run(t, t.TempDir(), "", "--help")
	if r.code != 0 {
		t.Fatalf("--help: %d %q", r.code, r.stderr)
	}
	named := regexp.MustCompile(`docs/[a-z-]+\.md`).FindAllString(r.stdout, -1)
	if len(named) < 10 {
		t.Fatalf("--help names %d docs pages, want one per command:\n%s", len(named), r.stdout)
	}
	for _, n := range named {
		if _, err := os.Stat(filepath.Join("..", "..", "..", n)); err != nil {
			t.Errorf("--help names %s: %v", n, err)
		}
	}
}
