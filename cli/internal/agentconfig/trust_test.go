package agentconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// Gemini CLI's folder trust, as 0.61.0's bundle decides it (checkPathTrust).
func TestGeminiTrusted(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(t.TempDir(), "shop")
	os.MkdirAll(root, 0o755)
	root, _ = filepath.EvalSymlinks(root)
	env := map[string]string{}
	l := Locations{Root: root, Home: home, Getenv: func(k string) string { return env[k] }}
	write := func(name, s string) {
		os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
		if err := os.WriteFile(filepath.Join(home, ".gemini", name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := geminiTrusted(l); ok {
		t.Error("trusted with no trusted folders")
	}
	write("trustedFolders.json", `{"`+filepath.Dir(root)+`": "TRUST_FOLDER"}`)
	if ok, why := geminiTrusted(l); !ok {
		t.Errorf("a parent's TRUST_FOLDER: %s", why)
	}
	write("trustedFolders.json", `{"`+filepath.Dir(root)+`": "TRUST_FOLDER", "`+root+`": "DO_NOT_TRUST"}`)
	if ok, _ := geminiTrusted(l); ok {
		t.Error("the longer DO_NOT_TRUST rule lost")
	}
	write("trustedFolders.json", `{"`+filepath.Join(root, "x")+`": "TRUST_PARENT"}`)
	if ok, why := geminiTrusted(l); !ok {
		t.Errorf("TRUST_PARENT of a child: %s", why)
	}
	write("trustedFolders.json", `{}`)
	env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
	if ok, _ := geminiTrusted(l); !ok {
		t.Error("GEMINI_CLI_TRUST_WORKSPACE=true")
	}
	delete(env, "GEMINI_CLI_TRUST_WORKSPACE")
	write("settings.json", `{"security": {"folderTrust": {"enabled": false}}}`)
	if ok, _ := geminiTrusted(l); !ok {
		t.Error("folder trust switched off")
	}
}

// Copilot CLI's trusted folders, as 1.0.102 writes them (// comments, trustedFolders) and the
// name it also reads (trusted_folders).
func TestCopilotTrusted(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(t.TempDir(), "shop")
	os.MkdirAll(root, 0o755)
	root, _ = filepath.EvalSymlinks(root)
	l := Locations{Root: root, Home: home}
	os.MkdirAll(filepath.Join(home, ".copilot"), 0o755)
	cfg := filepath.Join(home, ".copilot", "config.json")
	if copilotTrusted(l) {
		t.Error("trusted with no config.json")
	}
	for _, s := range []string{
		"// User settings belong in settings.json.\n// This file is managed automatically.\n{\n  \"trustedFolders\": [\"" + root + "\"],\n  \"url\": \"https://x//y\"\n}\n",
		`{"trusted_folders": ["` + filepath.Dir(root) + `"]}`,
	} {
		os.WriteFile(cfg, []byte(s), 0o644)
		if !copilotTrusted(l) {
			t.Errorf("not trusted with %s", s)
		}
	}
	os.WriteFile(cfg, []byte(`{"trustedFolders": ["/elsewhere"]}`), 0o644)
	if copilotTrusted(l) {
		t.Error("trusted by another folder")
	}
}

// FuzzStripLineComments: any config.json Copilot might write is read without a panic, and
// blanking its comments keeps every byte's position (line numbers in errors stay right).
func FuzzStripLineComments(f *testing.F) {
	for _, s := range []string{"// x\n{}", `{"a": "b//c"} // d`, `{"a": "\"//"}`, "//", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := stripLineComments([]byte(s))
		if len(out) != len(s) {
			t.Fatalf("%q: %d bytes became %d", s, len(s), len(out))
		}
	})
}
