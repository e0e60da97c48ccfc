package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// endToEnd skips a test that builds release binaries (minutes on two busy cores, more than any
// other package's whole run) unless REWIND_RELEASE_E2E=1: .ci/run sets it in a step of its own,
// so the README's go test -race work stays a newcomer's command.
func endToEnd(tb testing.TB) {
	tb.Helper()
	if os.Getenv("REWIND_RELEASE_E2E") != "1" {
		tb.Skip("builds release binaries: set REWIND_RELEASE_E2E=1 to run it (.ci/run does, in its release step)")
	}
}

// TestReleaseCommandAsDocumented runs docs/install.md's maintainer command as written, with its
// default -out, in a clean clone: every binary and tarball lands in dist/ at the root, SHA256SUMS
// checks, and the tree stays clean (no cli/dist). Run again over a dist/ holding a stale binary of
// another version and a tampered one of this version, it replaces the folder's contents and
// SHA256SUMS still checks.
func TestReleaseCommandAsDocumented(t *testing.T) {
	endToEnd(t)
	_, err := exec.LookPath("npm")
	requireTool(t, "npm", err)
	clone := gitClone(t, t.TempDir())
	dist := filepath.Join(clone, "dist")
	release := func() string {
		t.Helper()
		cmd := exec.Command("go", "run", "./tools/release", "npm", "-version", "v0.1.0") // docs/install.md
		cmd.Dir = clone
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go run ./tools/release npm -version v0.1.0: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(clone, "cli", "dist")); !os.IsNotExist(err) {
			t.Fatalf("the release wrote cli/dist (%v)", err)
		}
		if st := runCmd(t, clone, nil, "git", "status", "--porcelain"); st != "" {
			t.Fatalf("the release left the tree unclean:\n%s", st)
		}
		check := exec.Command("sha256sum", "--check", "SHA256SUMS")
		check.Dir = dist
		if sums, err := check.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum --check SHA256SUMS in dist: %v\n%s", err, sums)
		}
		sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range Targets {
			for _, name := range Artifacts("v0.1.0", tg) {
				if !strings.Contains(string(sums), "  "+name+"\n") {
					t.Fatalf("SHA256SUMS does not list %s:\n%s", name, sums)
				}
			}
			if _, err := os.Stat(filepath.Join(dist, "agent-rewind-mcp-"+tg.NPMPlatform()+"-0.1.0.tgz")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(filepath.Join(dist, "agent-rewind-mcp-0.1.0.tgz")); err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	release()

	stale := filepath.Join(dist, "agent-rewind-v0.0.9-linux-amd64")
	if err := os.WriteFile(stale, []byte("an older release"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, BinaryName("v0.1.0", Targets[0])), []byte("tampered"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := release(); !strings.Contains(out, "removing "+stale) {
		t.Fatalf("the second run did not say it removed %s:\n%s", stale, out)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("%s is still there (%v)", stale, err)
	}
}
