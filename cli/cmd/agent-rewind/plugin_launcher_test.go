package main

import (
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

// pluginHookLauncher is the plugin's launcher of agent-rewind-hook, which its hooks run.
func pluginHookLauncher(t *testing.T) string {
	t.Helper()
	l, err := filepath.Abs(filepath.Join(pluginDir, "bin", "agent-rewind-hook"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func runLauncher(t *testing.T, launcher string, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(launcher, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	return collect(t, cmd)
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
// Both launchers, the hooks' and the server's, fail so.
func TestClaudeCodePluginLauncherMissing(t *testing.T) {
	main, env := pluginLauncher(t, "")
	for _, launcher := range []string{main, pluginHookLauncher(t)} {
		r := runLauncher(t, launcher, env, bashHook(t, "PreToolUse", "git push", "toolu_m1"), pluginGuardArgs[0], t.TempDir(), "guard")
		var msg struct {
			SystemMessage string `json:"systemMessage"`
		}
		if r.code != 0 || r.stderr != "" || json.Unmarshal([]byte(r.stdout), &msg) != nil || strings.Count(r.stdout, "\n") != 1 ||
			!strings.Contains(msg.SystemMessage, "npm install -g @agent-rewind/mcp") || !strings.Contains(msg.SystemMessage, "NOT running") {
			t.Fatalf("%s: guard without a binary: %+v", launcher, r)
		}
		if r := runLauncher(t, launcher, env, "", "mcp"); r.code != 127 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "npm install -g @agent-rewind/mcp") {
			t.Fatalf("%s: mcp without a binary: %+v", launcher, r)
		}
	}
}

// The hooks' launcher runs agent-rewind-hook where it is installed, and remembers it; where
// only agent-rewind is, it runs that, remembering nothing, so that agent-rewind-hook installed
// later is found at the next call.
func TestClaudeCodePluginHookLauncher(t *testing.T) {
	launcher := pluginHookLauncher(t)
	onlyMain := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(onlyMain, "agent-rewind")); err != nil {
		t.Fatal(err)
	}
	_, env := pluginLauncher(t, onlyMain)
	if r := runLauncher(t, launcher, env, "", "--json", "version"); r.code != 0 || !strings.Contains(r.stdout, `"version"`) {
		t.Fatalf("only agent-rewind installed: %+v", r)
	}
	data := envValue(env, "CLAUDE_PLUGIN_DATA")
	if _, err := os.Stat(filepath.Join(data, "agent-rewind-hook-path")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the fallback to agent-rewind was remembered (%v)", err)
	}
	if err := os.Symlink(hookBin, filepath.Join(onlyMain, "agent-rewind-hook")); err != nil {
		t.Fatal(err)
	}
	// agent-rewind-hook answers anything but the guard with exit 2 and its usage.
	if r := runLauncher(t, launcher, env, "", "--json", "version"); r.code != 2 || !strings.HasPrefix(r.stderr, "agent-rewind-hook ") {
		t.Fatalf("agent-rewind-hook installed: %+v", r)
	}
	memo, err := os.ReadFile(filepath.Join(data, "agent-rewind-hook-path"))
	if err != nil || strings.TrimSpace(string(memo)) != filepath.Join(onlyMain, "agent-rewind-hook") {
		t.Fatalf("remembered %q (%v), want %s", memo, err, filepath.Join(onlyMain, "agent-rewind-hook"))
	}
	// The server's launcher still finds agent-rewind, remembered apart.
	main, _ := pluginLauncher(t, onlyMain)
	if r := runLauncher(t, main, env, "", "--json", "version"); r.code != 0 || !strings.Contains(r.stdout, `"version"`) {
		t.Fatalf("bin/agent-rewind beside agent-rewind-hook: %+v", r)
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

// TestClaudeCodePluginHookTime measures a guard hook call as installed (through the hooks'
// launcher, agent-rewind-hook found on PATH and remembered) against agent-rewind-hook alone and
// agent-rewind guard, on a call that is no effect.
func TestClaudeCodePluginHookTime(t *testing.T) {
	_, env := pluginLauncher(t, filepath.Dir(bin))
	launcher := pluginHookLauncher(t)
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
	main, direct, via := median(bin), median(hookBin), median(launcher)
	t.Logf("guard hook wall time per call, median of 15 (this test's -race binaries): agent-rewind guard %v, agent-rewind-hook %v, through the plugin launcher %v (+%v)", main.Round(time.Microsecond), direct.Round(time.Microsecond), via.Round(time.Microsecond), (via - direct).Round(time.Microsecond))
}
