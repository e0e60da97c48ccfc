package walk

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var ctx = context.Background()

// put writes content to root/rel with mode, creating its folders.
func put(t testing.TB, root, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// needTool skips when an outside tool is missing, unless REWIND_CI=1 makes that a failure.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatalf("%s is required under REWIND_CI=1 but is not on PATH", name)
		}
		t.Skipf("%s not on PATH: skipping", name)
	}
	return p
}

// sh runs a bash script in dir and fails the test on error.
func sh(t testing.TB, dir, script string) {
	t.Helper()
	bash := needTool(t, "bash")
	cmd := exec.Command(bash, "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash: %v\n%s\nscript:\n%s", err, out, script)
	}
}
