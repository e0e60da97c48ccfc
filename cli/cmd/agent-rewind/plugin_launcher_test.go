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

// npmSpy puts a wrapper named npm first on PATH in env that counts its runs in a file and runs
// the real npm: how many times the launcher asked npm. It returns the new env and the count.
func npmSpy(t *testing.T, env []string) ([]string, func() int) {
	t.Helper()
	real, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("REWIND_CI") != "" {
			t.Fatal("npm is not on PATH")
		}
		t.Skip("npm is not on PATH: the launcher's npm lookup cannot be measured")
	}
	dir, log := t.TempDir(), filepath.Join(t.TempDir(), "npm-runs")
	spy := "#!/bin/sh\necho run >>" + log + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "npm"), []byte(spy), 0o755); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + dir + ":" + p
		}
		out = append(out, kv)
	}
	return out, func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "run\n")
	}
}

// The launcher remembers npm's global bin folder: a call that finds no binary, or only
// agent-rewind where the hooks look for agent-rewind-hook, runs npm once, not at every call; a
// binary installed there later is found at the next call without npm; and a change of PATH or
// of the user's npmrc asks npm again.
func TestClaudeCodePluginLauncherRemembersNpm(t *testing.T) {
	launcher := pluginHookLauncher(t)
	_, env := pluginLauncher(t, "")
	env, npmRuns := npmSpy(t, env)
	home := t.TempDir()
	env = append(env, "HOME="+home)
	input := bashHook(t, "PreToolUse", "ls", "toolu_n1")
	guardArgs := []string{"--workspace", t.TempDir(), "guard"}
	missing := func(what string) {
		t.Helper()
		if r := runLauncher(t, launcher, env, input, guardArgs...); r.code != 0 || !strings.Contains(r.stdout, "NOT running") {
			t.Fatalf("%s: %+v", what, r)
		}
	}
	missing("first call")
	if n := npmRuns(); n != 1 {
		t.Fatalf("first call with no binary: npm ran %d times, want 1", n)
	}
	for range 3 {
		missing("later call")
	}
	if n := npmRuns(); n != 1 {
		t.Fatalf("calls with no binary: npm ran %d times in all, want 1 (remembered)", n)
	}
	// Installed into npm's global bin later: found at the next call, without npm.
	prefixBin := filepath.Join(envValue(env, "NPM_CONFIG_PREFIX"), "bin")
	if err := os.MkdirAll(prefixBin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(prefixBin, "agent-rewind")); err != nil {
		t.Fatal(err)
	}
	for range 3 { // only agent-rewind: the hooks' launcher looks for agent-rewind-hook each call
		if r := runLauncher(t, launcher, env, input, guardArgs...); r.code != 0 || r.stdout != "" {
			t.Fatalf("only agent-rewind, in npm's global bin: %+v", r)
		}
	}
	if n := npmRuns(); n != 1 {
		t.Fatalf("only agent-rewind installed: npm ran %d times in all, want 1", n)
	}
	os.Remove(filepath.Join(prefixBin, "agent-rewind"))
	// The user's npmrc changed (npm config set prefix ...): asked again, once.
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(home, ".npmrc"), []byte("fund=false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing("after ~/.npmrc changed")
	missing("again")
	if n := npmRuns(); n != 2 {
		t.Fatalf("after ~/.npmrc changed: npm ran %d times in all, want 2", n)
	}
	// Another PATH (another node, nvm): asked again.
	for i, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + p + ":" + t.TempDir()
		}
	}
	missing("another PATH")
	if n := npmRuns(); n != 3 {
		t.Fatalf("after PATH changed: npm ran %d times in all, want 3", n)
	}
}

// BenchmarkPluginHookLauncher measures a guard hook call on a call that is no effect through
// the plugin's hooks' launcher, by what is installed, against the binaries run directly (what
// the launcher execs): wall time per call, and the CPU time of the process and the children it
// waited for (cpu-ms/op), which a loaded machine inflates less.
func BenchmarkPluginHookLauncher(b *testing.B) {
	launcher, err := filepath.Abs(filepath.Join(pluginDir, "bin", "agent-rewind-hook"))
	if err != nil {
		b.Fatal(err)
	}
	only, both := b.TempDir(), b.TempDir()
	for _, l := range []struct{ dir, target string }{{only, bin}, {both, bin}, {both, hookBin}} {
		if err := os.Symlink(l.target, filepath.Join(l.dir, filepath.Base(l.target))); err != nil {
			b.Fatal(err)
		}
	}
	project := b.TempDir()
	input := `{"session_id":"s","transcript_path":"/t.jsonl","cwd":"` + project + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_b1"}`
	for _, c := range []struct {
		name, path, program string
	}{
		{"no binary", "", launcher},
		{"only agent-rewind", only, launcher},
		{"both, remembered", both, launcher},
		{"agent-rewind-hook alone", both, filepath.Join(both, "agent-rewind-hook")},
		{"agent-rewind guard alone", only, filepath.Join(only, "agent-rewind")},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := "/usr/local/bin:/usr/bin:/bin"
			if c.path != "" {
				path = c.path + ":" + path
			}
			env := append(os.Environ(), "PATH="+path, "CLAUDE_PLUGIN_DATA="+b.TempDir())
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(c.program, "--workspace", project, "guard")
				cmd.Env, cmd.Stdin = env, strings.NewReader(input)
				if out, err := cmd.Output(); err != nil || (c.path != "" && len(out) != 0) {
					b.Fatalf("%s: %v %q", c.name, err, out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
