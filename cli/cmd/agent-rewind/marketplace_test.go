package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPluginMarketplace checks the repository's plugin marketplace against the format Claude
// Code documents (code.claude.com/docs/en/plugins/marketplace-reference): a kebab-case name that
// is not reserved, an owner with a name, and plugin entries whose relative source (resolved from
// the repository root, starting "./") holds a plugin of the same name. Claude Code ignores
// unknown keys, so a misspelled one would load silently: the decode here rejects them.
func TestPluginMarketplace(t *testing.T) {
	type person struct {
		Name  string `json:"name"`
		Email string `json:"email,omitempty"`
		URL   string `json:"url,omitempty"`
	}
	var m struct {
		Name     string `json:"name"`
		Owner    person `json:"owner"`
		Metadata struct {
			Description string `json:"description"`
			Version     string `json:"version"`
			PluginRoot  string `json:"pluginRoot"`
		} `json:"metadata"`
		Plugins []struct {
			Name        string   `json:"name"`
			Source      string   `json:"source"`
			Description string   `json:"description"`
			Version     string   `json:"version"`
			Author      *person  `json:"author"`
			License     string   `json:"license"`
			Homepage    string   `json:"homepage"`
			Repository  string   `json:"repository"`
			Keywords    []string `json:"keywords"`
			Category    string   `json:"category"`
			Tags        []string `json:"tags"`
		} `json:"plugins"`
	}
	decodeStrict(t, filepath.Join("..", "..", ".claude-plugin", "marketplace.json"), &m)
	kebab := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	reserved := []string{"claude-code-marketplace", "claude-code-plugins", "claude-plugins-official", "anthropic-marketplace", "anthropic-plugins", "agent-skills", "anthropic-agent-skills", "claude-community", "claude-plugins-community", "anthropic-plugin-directory", "claude-plugin-directory"}
	if !kebab.MatchString(m.Name) || slices.Contains(reserved, m.Name) || strings.Contains(m.Name, "anthropic") || strings.Contains(m.Name, "official") {
		t.Fatalf("marketplace name %q: kebab-case, not reserved", m.Name)
	}
	if m.Owner.Name == "" {
		t.Fatal("marketplace owner.name is required")
	}
	if len(m.Plugins) != 1 {
		t.Fatalf("want the one plugin, got %d entries", len(m.Plugins))
	}
	for _, p := range m.Plugins {
		if !kebab.MatchString(p.Name) || !strings.HasPrefix(p.Source, "./") || strings.Contains(p.Source, "..") {
			t.Fatalf("plugin entry %q: kebab-case name and a relative source starting ./ without ..: %q", p.Name, p.Source)
		}
		// The source, from the repository root, is the plugin folder the other tests check.
		src, err := filepath.Abs(filepath.Join(pluginDir, "..", "..", filepath.FromSlash(p.Source)))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := filepath.Abs(pluginDir)
		if src != want {
			t.Fatalf("plugin %s: source %s is not %s", p.Name, src, want)
		}
		b, err := os.ReadFile(filepath.Join(src, ".claude-plugin", "plugin.json"))
		if err != nil || !strings.Contains(string(b), `"name": "`+p.Name+`"`) || !strings.Contains(string(b), `"license": "`+p.License+`"`) || p.License != "FSL-1.1-ALv2" {
			t.Fatalf("plugin %s: plugin.json at its source must carry the same name and licence FSL-1.1-ALv2 (%v)", p.Name, err)
		}
	}
}
