package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// copyTree copies the checkout's files (tracked and untracked, minus ignored ones such as
// node_modules) from root to dst: a source tree in another folder, with no .git.
func copyTree(t *testing.T, root, dst string) {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		} else if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeFile(filepath.Join(dst, rel), b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// gitClone copies the checkout into dir/clone and commits it there as one commit, with a
// test identity and no global git configuration: a clean checkout of this tree. It returns the
// clone's folder.
func gitClone(t *testing.T, dir string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(dir, "clone")
	copyTree(t, root, clone)
	t.Setenv("GIT_AUTHOR_NAME", "release test")
	t.Setenv("GIT_AUTHOR_EMAIL", "release@test.invalid")
	t.Setenv("GIT_COMMITTER_NAME", "release test")
	t.Setenv("GIT_COMMITTER_EMAIL", "release@test.invalid")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "tree"}} {
		runCmd(t, clone, nil, "git", append([]string{"-C", clone}, args...)...)
	}
	return clone
}

// TestReproducible builds the host's release binary from two copies of this tree in different
// folders and requires byte-identical binaries and SHA256SUMS. With REWIND_REPRO_COLD=1 the
// second build starts from an empty build cache, so no compiled package is shared between the
// two (slower: every dependency is compiled again).
func TestReproducible(t *testing.T) {
	endToEnd(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var sums [2][]byte
	var bins, hooks [2][]byte
	for i, dir := range []string{filepath.Join(tmp, "a"), filepath.Join(tmp, "second", "copy", "of", "the", "tree")} {
		copyTree(t, root, dir)
		if i == 1 && os.Getenv("REWIND_REPRO_COLD") == "1" {
			t.Setenv("GOCACHE", filepath.Join(tmp, "gocache"))
		}
		o := Options{Root: dir, Out: filepath.Join(dir, "dist"), Version: "v0.3.0", Commit: "0123456789abcdef0123456789abcdef01234567", Targets: []Target{host(t)}, Log: io.Discard}
		out, err := Build(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		if bins[i], err = os.ReadFile(out[o.Targets[0]].Main); err != nil {
			t.Fatal(err)
		}
		if hooks[i], err = os.ReadFile(out[o.Targets[0]].Hook); err != nil {
			t.Fatal(err)
		}
		if sums[i], err = os.ReadFile(filepath.Join(o.Out, "SHA256SUMS")); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(bins[0], bins[1]) {
		t.Fatalf("the two builds differ (%d and %d bytes)", len(bins[0]), len(bins[1]))
	}
	if !bytes.Equal(hooks[0], hooks[1]) {
		t.Fatalf("the two builds of agent-rewind-hook differ (%d and %d bytes)", len(hooks[0]), len(hooks[1]))
	}
	if !bytes.Equal(sums[0], sums[1]) || !bytes.Contains(sums[0], []byte("  "+BinaryName("v0.3.0", host(t))+"\n")) ||
		!bytes.Contains(sums[0], []byte("  "+HookBinaryName("v0.3.0", host(t))+"\n")) {
		t.Fatalf("SHA256SUMS:\n%s\n%s", sums[0], sums[1])
	}
	// The stamped version and commit are what the binary reports.
	bin := filepath.Join(tmp, "a", "dist", BinaryName("v0.3.0", host(t)))
	if runtime.GOOS == "linux" { // docs/install.md: the Linux binaries are static
		for _, b := range []string{bin, filepath.Join(tmp, "a", "dist", HookBinaryName("v0.3.0", host(t)))} {
			if interp := elfInterpreter(t, b); interp != "" {
				t.Errorf("%s is dynamically linked (interpreter %s)", b, interp)
			}
		}
	}
	out, err := exec.Command(bin, "--json", "version").Output()
	var v struct{ Version, Commit string }
	if err != nil || json.Unmarshal(out, &v) != nil || v.Version != "v0.3.0" || v.Commit != "0123456789abcdef0123456789abcdef01234567" {
		t.Fatalf("version: %s (%v)", out, err)
	}
	// The hook binary carries the same stamp: its answer to anything but the guard names it.
	var stderr bytes.Buffer
	hook := exec.Command(filepath.Join(tmp, "a", "dist", HookBinaryName("v0.3.0", host(t))), "version")
	hook.Stderr = &stderr
	if err := hook.Run(); hook.ProcessState.ExitCode() != 2 || !strings.HasPrefix(stderr.String(), "agent-rewind-hook v0.3.0: usage: ") {
		t.Fatalf("agent-rewind-hook version: %v, %q", err, stderr.String())
	}
	// docs/install.md's checks (Linux, macOS), where the tool is present, accept the file as written.
	for _, argv := range [][]string{{"sha256sum", "--check", "--ignore-missing", "SHA256SUMS"}, {"shasum", "-a", "256", "--check", "--ignore-missing", "SHA256SUMS"}} {
		if _, err := exec.LookPath(argv[0]); err != nil {
			continue
		}
		check := exec.Command(argv[0], argv[1:]...)
		check.Dir = filepath.Join(tmp, "a", "dist")
		if out, err := check.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
}

// TestTargets: every release platform is a target, named as Go and as npm name it, Windows with
// its programs named .exe and both in one .zip; a platform with no release binary is refused
// with the list of those that have one.
func TestTargets(t *testing.T) {
	all, err := ParseTargets("all")
	if err != nil || len(all) != 6 {
		t.Fatalf("ParseTargets(all) = %v, %v", all, err)
	}
	for _, c := range []struct {
		target, npm string
		artifacts   []string
	}{
		{"linux/amd64", "linux-x64", []string{"agent-rewind-v0.3.0-linux-amd64", "agent-rewind-hook-v0.3.0-linux-amd64"}},
		{"darwin/arm64", "darwin-arm64", []string{"agent-rewind-v0.3.0-darwin-arm64", "agent-rewind-hook-v0.3.0-darwin-arm64"}},
		{"windows/amd64", "win32-x64", []string{"agent-rewind-v0.3.0-windows-amd64.zip"}},
		{"windows/arm64", "win32-arm64", []string{"agent-rewind-v0.3.0-windows-arm64.zip"}},
	} {
		ts, err := ParseTargets(c.target)
		if err != nil || len(ts) != 1 {
			t.Fatalf("ParseTargets(%s) = %v, %v", c.target, ts, err)
		}
		tg := ts[0]
		if got := tg.NPMPlatform(); got != c.npm {
			t.Errorf("%s: npm platform %q, want %q", tg, got, c.npm)
		}
		if got := Artifacts("v0.3.0", tg); !slices.Equal(got, c.artifacts) {
			t.Errorf("%s: artifacts %v, want %v", tg, got, c.artifacts)
		}
		wantExe := "agent-rewind-hook"
		if tg.OS == "windows" {
			wantExe += ".exe"
		}
		if got := ProgramName("agent-rewind-hook", tg); got != wantExe {
			t.Errorf("%s: the hook is run as %q, want %q", tg, got, wantExe)
		}
	}
	if _, err := ParseTargets("linux/amd64,freebsd/amd64"); err == nil || !strings.Contains(err.Error(), `"freebsd/amd64" is not a release target`) || !strings.Contains(err.Error(), "windows/arm64") {
		t.Fatalf("ParseTargets(freebsd/amd64) = %v", err)
	}
}

func TestCheckVersion(t *testing.T) {
	for v, ok := range map[string]bool{"v0.3.0": true, "v1.2.3-rc.1": true, "0.3.0": false, "v0.3": false, "v0.3.0+meta": false, "": false} {
		if err := CheckVersion(v); (err == nil) != ok {
			t.Errorf("CheckVersion(%q) = %v", v, err)
		}
	}
}

// TestPackageJSONLicense: every package.json of the repository (the npm packages and the test
// clients) carries the licence's SPDX identifier.
func TestPackageJSONLicense(t *testing.T) {
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*package.json").Output()
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(string(out))
	if len(files) == 0 {
		t.Fatal("no package.json found")
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue
		}
		var pkg struct{ License string }
		if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.License != npmLicense {
			t.Errorf("%s: license %q, want %q (%v)", f, pkg.License, npmLicense, err)
		}
	}
}

// TestCommandLine: a version without its v is refused (TestReleaseCommandAsDocumented runs
// the build as docs/install.md shows it), and a checkout with uncommitted changes is refused unless -allow-dirty, which stamps
// COMMIT-dirty.
func TestCommandLine(t *testing.T) {
	if err := run(t.Context(), []string{"build", "-version", "0.3.0"}, io.Discard); err == nil || !strings.Contains(err.Error(), "vMAJOR.MINOR.PATCH") {
		t.Fatalf("version without v: %v", err)
	}

	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	clean, err := headCommit(t.Context(), repo, false)
	if err != nil || len(clean) != 40 {
		t.Fatalf("clean checkout: %q, %v", clean, err)
	}
	if err := os.WriteFile(filepath.Join(repo, "new.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := headCommit(t.Context(), repo, false); err == nil || !strings.Contains(err.Error(), "-allow-dirty") {
		t.Fatalf("dirty checkout without -allow-dirty: %v", err)
	}
	if c, err := headCommit(t.Context(), repo, true); err != nil || c != clean+"-dirty" {
		t.Fatalf("dirty checkout with -allow-dirty: %q, %v", c, err)
	}
}
