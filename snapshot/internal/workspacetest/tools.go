package workspacetest

import (
	"os"
	"os/exec"
	"testing"
)

// NeedTool returns the path of an outside tool, and skips the test when it is missing, unless
// REWIND_CI=1 makes that a failure (CI installs every tool the tests use).
func NeedTool(t testing.TB, name string) string {
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

// Sh runs a bash script in dir (errexit, nounset, pipefail; git with no user configuration and
// a fixed identity) and fails the test on error, with the script's output.
func Sh(t testing.TB, dir, script string) {
	t.Helper()
	bash := NeedTool(t, "bash")
	cmd := exec.Command(bash, "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash: %v\n%s\nscript:\n%s", err, out, script)
	}
}
