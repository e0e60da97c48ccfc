package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// End-to-end tests of which folder the guard and the MCP server protect, under each client's
// launch conditions: the real binary, started where the client starts it, with the environment
// and roots the client provides.

// hooksDir is barrier's hook fixtures folder.
var hooksDir = filepath.Join("..", "..", "..", "barrier", "testdata", "hooks")

// clientFixture reads a hook fixture with the project folder it names ("/Users/dev/shop" or
// "/home/dev/lib") replaced by project.
func clientFixture(t *testing.T, name, project string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hooksDir, name))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := json.Marshal(project)
	quoted := string(p[1 : len(p)-1])
	s := strings.ReplaceAll(string(b), "/Users/dev/shop", quoted)
	return strings.ReplaceAll(s, "/home/dev/lib", quoted)
}

// runIn runs the binary in dir with env (nil: this process's) and stdin.
func runIn(t *testing.T, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
	return collect(t, cmd)
}

// envWithout is this process's environment without the named variables, plus extra.
func envWithout(names []string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// protectRoot undoes what a broken guard or server would do in a test that runs it in "/" (the
// machine is shared): state it leaves there is removed, and the test fails.
func protectRoot(t *testing.T) {
	t.Helper()
	legacy := filepath.Join("/", ".rewind")
	if _, err := os.Lstat(legacy); err == nil || hasStore(t, "/") {
		return // not this test's to remove
	}
	t.Cleanup(func() {
		if _, err := os.Lstat(legacy); err == nil {
			os.RemoveAll(legacy)
			t.Errorf("agent-rewind state was written to %s (removed): / was taken as a workspace", legacy)
		}
		if hasStore(t, "/") {
			t.Errorf("a store was made for /: / was taken as a workspace")
		}
	})
}

func noStoreFor(t *testing.T, dir string) {
	t.Helper()
	if hasStore(t, dir) {
		t.Fatalf("%s has a store: the guard recorded in the wrong folder", dir)
	}
}

// Each client's deciding hook input, run by a guard process started elsewhere and without
// --workspace (as Cursor runs user-level hooks in ~/.cursor): the effect is admitted, recorded in
// the folder the input names, and refused on repeat in that client's blocking form.
func TestGuardRecordsWhereTheInputSays(t *testing.T) {
	for _, c := range []struct {
		file           string
		allow, refused expectation
	}{
		{"claude-code/pretooluse-bash-git-push.json", expectation{0, "", ""}, expectation{2, "", "outcome is unknown"}},
		{"claude-code/pretooluse-powershell-git-push.json", expectation{0, "", ""}, expectation{2, "", "outcome is unknown"}},
		{"codex/pretooluse-bash-npm-publish.json", expectation{0, "", ""}, expectation{2, "", "outcome is unknown"}},
		{"cursor/beforeshellexecution-git-push.json", expectation{0, `\{"permission":"allow"\}\n`, ""}, expectation{0, `\{"permission":"deny",.*it already fired.*\}\n`, ""}},
		{"cursor/pretooluse-shell-git-push.json", expectation{0, `\{"permission":"allow"\}\n`, ""}, expectation{0, `\{"permission":"deny",.*outcome is unknown.*\}\n`, ""}},
		{"cline/pretooluse-execute-command-git-push.json", expectation{0, `\{"cancel":false\}\n`, ""}, expectation{0, `\{"cancel":true,"errorMessage":".*it already fired.*"\}\n`, ""}},
		{"windsurf/pre-run-command-git-push.json", expectation{0, "", ""}, expectation{2, "", "it already fired"}},
		{"gemini-cli/beforetool-shell-git-push.json", expectation{0, `\{\}\n`, ""}, expectation{2, "", "it already fired"}},
		{"vscode/pretooluse-run-in-terminal-git-push.json", expectation{0, "", ""}, expectation{0, `\{"hookSpecificOutput":\{.*"permissionDecision":"deny".*outcome is unknown.*\}\}\n`, ""}},
		{"copilot/pretooluse-bash-git-push.json", expectation{0, "", ""}, expectation{0, `\{"hookSpecificOutput":\{.*"permissionDecision":"deny".*it already fired.*\}\}\n`, ""}},
		{"cline/real-3.0.65-tool_call-run_commands-git-push.json", expectation{0, `\{"cancel":false\}\n`, ""}, expectation{0, `\{"cancel":false,"overrideInput":.*outcome is unknown.*\}\n`, ""}},
	} {
		t.Run(c.file, func(t *testing.T) {
			project := filepath.Join(t.TempDir(), "my project")
			elsewhere := t.TempDir()
			if err := os.Mkdir(project, 0o755); err != nil {
				t.Fatal(err)
			}
			env := envWithout([]string{"CLAUDE_PROJECT_DIR"})
			in := clientFixture(t, c.file, project)
			check := func(what string, r result, want expectation) {
				t.Helper()
				if r.code != want.code || !regexp.MustCompile(`^(?s:`+want.stdout+`)$`).MatchString(r.stdout) || !strings.Contains(r.stderr, want.stderr) {
					t.Fatalf("%s: %+v, want %+v", what, r, want)
				}
			}
			check("first", runIn(t, elsewhere, env, in, "guard"), c.allow)
			noStoreFor(t, elsewhere)
			if rec := ledgerRecord(t, project, onlyKey(t, project)); rec == nil {
				t.Fatal("no record in the project")
			}
			again := regexp.MustCompile(`"(tool_use_id|id)":\s*"([^"]*)"`).ReplaceAllString(in, `"${1}": "${2}_again"`)
			check("repeat", runIn(t, elsewhere, env, again, "guard"), c.refused)
			noStoreFor(t, elsewhere)
			verifyChain(t, project)
		})
	}
}

// Where the input names no folder (Windsurf's pre_mcp_tool_use), the guard takes the project
// that holds its working directory; outside any project it refuses effects (exit 2, saying what
// to configure) but still lets other calls run. Folders that are clearly not a project are
// refused whatever names them, and an empty --workspace (PowerShell's "$CLAUDE_PROJECT_DIR") is
// said so and ignored.
func TestGuardWorkspaceRules(t *testing.T) {
	home := t.TempDir()
	env := envWithout([]string{"CLAUDE_PROJECT_DIR", "HOME"}, "HOME="+home)
	project := t.TempDir()
	if err := os.Mkdir(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(project, "src", "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	mcpCall := clientFixture(t, "windsurf/pre-mcp-tool-use-slack.json", project)

	if r := runIn(t, sub, env, mcpCall, "guard"); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("from a project's subfolder: %+v", r)
	}
	if rec := ledgerRecord(t, project, onlyKey(t, project)); rec == nil || rec.State != barrier.Spent {
		t.Fatalf("record at the repository top: %+v", rec)
	}
	noStoreFor(t, sub)

	nowhere := t.TempDir()
	r := runIn(t, nowhere, env, mcpCall, "guard")
	if r.code != 2 || !strings.Contains(r.stderr, "no workspace") || !strings.Contains(r.stderr, "--workspace") {
		t.Fatalf("outside any project: %+v", r)
	}
	if r := runIn(t, nowhere, env, clientFixture(t, "windsurf/pre-run-command-ls.json", ""), "guard"); r.code != 0 {
		t.Fatalf("a call that is not an effect, with no workspace: %+v", r)
	}
	noStoreFor(t, nowhere)

	protectRoot(t)
	for _, c := range []struct{ name, folder, why string }{
		{"home", home, "the home folder"},
		{"cursor user hooks", filepath.Join(home, ".cursor"), "an agent's own folder"},
		{"root", "/", "the filesystem root"},
	} {
		if err := os.MkdirAll(c.folder, 0o755); err != nil && c.folder != "/" {
			t.Fatal(err)
		}
		r := runIn(t, c.folder, env, clientFixture(t, "claude-code/pretooluse-bash-git-push.json", c.folder), "guard")
		if r.code != 2 || !strings.Contains(r.stderr, c.why) || !strings.Contains(r.stderr, "refusing workspace") {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
	noStoreFor(t, home)

	// PowerShell expands "$CLAUDE_PROJECT_DIR" to nothing: the flag is empty, not ".".
	p2 := t.TempDir()
	r = runIn(t, nowhere, env, clientFixture(t, "claude-code/pretooluse-bash-git-push.json", p2), "--workspace", "", "guard")
	if r.code != 0 || !strings.Contains(r.stderr, "--workspace is empty") || !strings.Contains(r.stderr, p2) {
		t.Fatalf("empty --workspace: %+v", r)
	}
	if ledgerRecord(t, p2, onlyKey(t, p2)) == nil {
		t.Fatal("empty --workspace: not recorded in the input's folder")
	}
	noStoreFor(t, nowhere)
}

// In a Claude Code worktree session CLAUDE_PROJECT_DIR (and so the plugin's --workspace) stays at
// the main checkout while the hook input's cwd follows the worktree: the worktree is protected.
func TestGuardClaudeWorktree(t *testing.T) {
	git := needTool(t, "git")
	project := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "init"},
		{"worktree", "add", "-q", filepath.Join(".claude", "worktrees", "fix-1")},
	} {
		cmd := exec.Command(git, args...)
		cmd.Dir = project
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	wt := filepath.Join(project, ".claude", "worktrees", "fix-1")
	in := clientFixture(t, "claude-code/pretooluse-bash-git-push.json", wt)
	if r := runIn(t, t.TempDir(), envWithout(nil, "CLAUDE_PROJECT_DIR="+project), in, "--workspace", project, "guard"); r.code != 0 {
		t.Fatalf("guard: %+v", r)
	}
	if ledgerRecord(t, wt, onlyKey(t, wt)) == nil {
		t.Fatal("not recorded in the worktree")
	}
	noStoreFor(t, project)
}

// startMCPClient starts "agent-rewind args..." in dir with env, connected to a Go SDK client that
// speaks protocol version proto and lists roots (nil: the client declares no roots capability).
func startMCPClient(t *testing.T, dir string, env []string, proto string, roots []string, args ...string) (*mcp.ClientSession, *syncBuf) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	opts := &mcp.ClientOptions{}
	if roots == nil {
		opts.Capabilities = &mcp.ClientCapabilities{} // no roots capability
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent-rewind-e2e", Version: "1"}, opts)
	for _, r := range roots {
		client.AddRoots(&mcp.Root{URI: "file://" + filepath.ToSlash(r), Name: filepath.Base(r)})
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a bound for a hung child, not a timing assertion
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Minute}, &mcp.ClientSessionOptions{ProtocolVersion: proto})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("server did not exit cleanly: %v\nstderr:\n%s", err, stderr.String())
		}
	})
	return cs, stderr
}

// The MCP server under each client's launch conditions either protects the project, saying
// which rule chose it, or refuses every tool with what to configure.
func TestMCPWorkspaceChoice(t *testing.T) {
	home := t.TempDir()
	base := envWithout([]string{"CLAUDE_PROJECT_DIR", "HOME", "REWIND_MCP_PROFILE"}, "HOME="+home)
	pluginCache := filepath.Join(home, ".claude", "plugins", "cache", "rewind", "agent-rewind", "0.1.0")
	if err := os.MkdirAll(pluginCache, 0o755); err != nil {
		t.Fatal(err)
	}
	const old = "2025-06-18" // the protocol version clients with roots speak
	for _, c := range []struct {
		name  string
		dir   string
		env   []string
		proto string
		roots bool
		args  []string
		rule  string // the rule that must choose the project; "" = refused
		why   string // the refusal's reason
	}{
		{name: "Claude Code user plugin: cache folder, CLAUDE_PROJECT_DIR", dir: pluginCache, env: []string{"CLAUDE_PROJECT_DIR=$P"}, rule: "CLAUDE_PROJECT_DIR"},
		{name: "Claude Code user plugin without CLAUDE_PROJECT_DIR", dir: pluginCache, why: "a plugin cache"},
		{name: "plugin .mcp.json, ${CLAUDE_PROJECT_DIR} substituted", dir: pluginCache, args: []string{"--workspace", "$P"}, rule: "--workspace"},
		{name: "Cursor global config: home folder, ${workspaceFolder}", dir: home, args: []string{"--workspace", "$P"}, rule: "--workspace"},
		{name: "home folder, client lists roots", dir: home, proto: old, roots: true, rule: "the client's roots/list"},
		{name: "home folder, no roots", dir: home, proto: old, why: "the home folder"},
		{name: "Cline: extension host in /", dir: "/", why: "the filesystem root"},
		{name: "Codex: cleared environment, cwd configured", dir: "$P", env: []string{"PATH=" + os.Getenv("PATH")}, rule: "the working directory"},
		{name: "roots on protocol 2026-07-28 are not asked for", dir: home, roots: true, why: "the home folder"},
	} {
		t.Run(c.name, func(t *testing.T) {
			project := t.TempDir()
			sh(t, project, "printf v1 > app.txt")
			sub := func(s string) string { return strings.ReplaceAll(s, "$P", project) }
			env := base
			if strings.HasPrefix(c.name, "Codex") {
				env = []string{"HOME=" + home}
				// Codex passes no REWIND_STATE_DIR: the store goes to the default state folder.
				t.Setenv("REWIND_STATE_DIR", filepath.Join(home, ".local", "state", "agent-rewind"))
			}
			for _, kv := range c.env {
				env = append(env, sub(kv))
			}
			var args []string
			for _, a := range c.args {
				args = append(args, sub(a))
			}
			var roots []string
			if c.roots {
				roots = []string{project}
			}
			if c.dir == "/" {
				protectRoot(t)
			}
			cs, stderr := startMCPClient(t, sub(c.dir), env, c.proto, roots, append(args, "mcp")...)
			if c.rule == "" {
				// A read-only tool: a server that wrongly accepted the folder writes nothing there.
				res := callTool(t, cs, "list", nil)
				if !res.IsError || !strings.Contains(resultText(res), c.why) || !strings.Contains(resultText(res), "--workspace") {
					t.Fatalf("want a refusal naming %q and what to configure: %s", c.why, resultText(res))
				}
				noStoreFor(t, sub(c.dir))
				return
			}
			res := callTool(t, cs, "checkpoint", map[string]any{"label": "first"})
			if res.IsError {
				t.Fatalf("checkpoint: %s\nstderr:\n%s", resultText(res), stderr)
			}
			if !hasStore(t, project) {
				t.Fatalf("no store in the project\nstderr:\n%s", stderr)
			}
			if !strings.Contains(stderr.String(), "chosen by "+c.rule) {
				t.Fatalf("stderr %q does not say the rule %q", stderr, c.rule)
			}
			if c.dir != "$P" {
				noStoreFor(t, sub(c.dir))
			}
		})
	}
}
