package agentconfig

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The integration files this package carries are integrations/ as it is: a change there must
// reach setup (go generate ./cli/internal/agentconfig), or this fails.
func TestShippedMatchesIntegrations(t *testing.T) {
	src := filepath.Join("..", "..", "..", "integrations")
	onDisk := map[string]string{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == ".claude-plugin") {
			return fs.SkipDir
		}
		if d.IsDir() || d.Name() == "README.md" {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		onDisk[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, content := range onDisk {
		if got, ok := shipped[rel]; !ok || got != content {
			t.Errorf("integrations/%s differs from what setup carries: run go generate ./cli/internal/agentconfig", rel)
		}
	}
	for rel := range shipped {
		if _, ok := onDisk[rel]; !ok {
			t.Errorf("setup carries integrations/%s, which is gone: run go generate ./cli/internal/agentconfig", rel)
		}
	}
	for _, rel := range ShippedUsed() {
		if _, ok := shipped[rel]; !ok {
			t.Errorf("a client's part is made from integrations/%s, which does not exist", rel)
		}
	}
}
