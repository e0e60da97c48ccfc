package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStageMainVersions: the staged main package carries the release's npm version, and so does
// every optional dependency on a platform package; a template that lost a platform is refused.
func TestStageMainVersions(t *testing.T) {
	var platforms []string
	for _, tg := range Targets {
		platforms = append(platforms, npmMain+"-"+tg.NPMPlatform())
	}
	src := filepath.Join("..", "..", "npm", "mcp")
	dir := t.TempDir()
	if err := stageMain(src, dir, "1.2.3-rc.1", platforms, []byte("licence")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Version  string
		License  string
		Optional map[string]string `json:"optionalDependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil || pkg.Version != "1.2.3-rc.1" || pkg.License != "FSL-1.1-ALv2" || len(pkg.Optional) != len(Targets) {
		t.Fatalf("staged package.json: %+v (%v)", pkg, err)
	}
	for name, v := range pkg.Optional {
		if v != "1.2.3-rc.1" {
			t.Errorf("optional dependency %s at %q", name, v)
		}
	}

	// A template missing a platform package.
	broken := t.TempDir()
	copyTree(t, src, broken)
	tpl, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Replace(string(tpl), `"@agent-rewind/mcp-darwin-arm64": "0.0.0-dev",`, "", 1)
	if err := os.WriteFile(filepath.Join(broken, "package.json"), []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := stageMain(broken, t.TempDir(), "1.2.3", platforms, nil); err == nil || !strings.Contains(err.Error(), "optionalDependencies") {
		t.Fatalf("template without darwin-arm64: %v", err)
	}
}
