package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// pluginLauncher is the plugin's launcher script and an environment in which the only
// agent-rewind it can find is in pathDir (if not ""): system folders on PATH, an empty npm
// global prefix and an empty plugin data folder.
func pluginLauncher(t *testing.T, pathDir string) (string, []string) {
	t.Helper()
	launcher, err := filepath.Abs(filepath.Join(pluginDir, "bin", "agent-rewind"))
	if err != nil {
		t.Fatal(err)
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	if pathDir != "" {
		path = pathDir + ":" + path
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "CLAUDE_PLUGIN_DATA=") && !strings.HasPrefix(strings.ToUpper(kv), "NPM_CONFIG_PREFIX=") {
			env = append(env, kv)
		}
	}
	return launcher, append(env, "PATH="+path, "CLAUDE_PLUGIN_DATA="+t.TempDir(), "NPM_CONFIG_PREFIX="+t.TempDir())
}

func runLauncher(t *testing.T, launcher string, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(launcher, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var xe *exec.ExitError
	if err != nil && !errors.As(err, &xe) {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

func envValue(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// Without the binary the guard hook fails open with one line Claude Code shows the user
// (systemMessage, exit 0) instead of blocking every call; the MCP server fails with that line.
func TestClaudeCodePluginLauncherMissing(t *testing.T) {
	launcher, env := pluginLauncher(t, "")
	r := runLauncher(t, launcher, env, bashHook(t, "PreToolUse", "git push", "toolu_m1"), pluginGuardArgs[0], t.TempDir(), "guard")
	var msg struct {
		SystemMessage string `json:"systemMessage"`
	}
	if r.code != 0 || r.stderr != "" || json.Unmarshal([]byte(r.stdout), &msg) != nil || strings.Count(r.stdout, "\n") != 1 ||
		!strings.Contains(msg.SystemMessage, "npm install -g @agent-rewind/mcp") || !strings.Contains(msg.SystemMessage, "NOT running") {
		t.Fatalf("guard without a binary: %+v", r)
	}
	if r := runLauncher(t, launcher, env, "", "mcp"); r.code != 127 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "npm install -g @agent-rewind/mcp") {
		t.Fatalf("mcp without a binary: %+v", r)
	}
}

// The launcher finds the binary in npm's global bin, then in the plugin's data folder, and
// remembers where; a remembered binary that is gone is looked for again.
func TestClaudeCodePluginLauncherFinds(t *testing.T) {
	launcher, env := pluginLauncher(t, "")
	if _, err := exec.LookPath("npm"); err == nil {
		prefixBin := filepath.Join(envValue(env, "NPM_CONFIG_PREFIX"), "bin")
		if err := os.MkdirAll(prefixBin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bin, filepath.Join(prefixBin, "agent-rewind")); err != nil {
			t.Fatal(err)
		}
		if r := runLauncher(t, launcher, env, "", "--json", "version"); r.code != 0 || !strings.Contains(r.stdout, `"version"`) {
			t.Fatalf("npm global bin: %+v", r)
		}
		os.Remove(filepath.Join(prefixBin, "agent-rewind"))
	} else if os.Getenv("REWIND_CI") != "" {
		t.Fatal("npm is not on PATH")
	}
	data := envValue(env, "CLAUDE_PLUGIN_DATA")
	if err := os.Symlink(bin, filepath.Join(data, "agent-rewind")); err != nil {
		t.Fatal(err)
	}
	if r := runLauncher(t, launcher, env, "", "--json", "version"); r.code != 0 || !strings.Contains(r.stdout, `"version"`) {
		t.Fatalf("plugin data folder: %+v", r)
	}
	memo, err := os.ReadFile(filepath.Join(data, "binary-path"))
	if err != nil || strings.TrimSpace(string(memo)) != filepath.Join(data, "agent-rewind") {
		t.Fatalf("remembered %q (%v), want the data folder's binary", memo, err)
	}
	os.Remove(filepath.Join(data, "agent-rewind"))
	if r := runLauncher(t, launcher, env, "", "mcp"); r.code != 127 {
		t.Fatalf("a remembered binary that is gone: %+v", r)
	}
}

// TestClaudeCodePluginHookTime measures a guard hook call as installed (through the launcher,
// binary found on PATH and remembered) against the binary alone, on a call that is no effect.
func TestClaudeCodePluginHookTime(t *testing.T) {
	launcher, env := pluginLauncher(t, filepath.Dir(bin))
	project := t.TempDir()
	input := bashHook(t, "PreToolUse", "ls -la", "toolu_t1")
	args := []string{"--workspace", project, "guard"}
	median := func(cmd string) time.Duration {
		var d []time.Duration
		for range 15 {
			start := time.Now()
			if r := runLauncher(t, cmd, env, input, args...); r.code != 0 || r.stdout != "" {
				t.Fatalf("%s: %+v", cmd, r)
			}
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	direct, via := median(bin), median(launcher)
	t.Logf("guard hook wall time per call, median of 15 (this test's -race binary): binary %v, through the plugin launcher %v (+%v)", direct.Round(time.Microsecond), via.Round(time.Microsecond), (via - direct).Round(time.Microsecond))
}
