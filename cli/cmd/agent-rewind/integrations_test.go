package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The shipped integration folders (integrations/<client>/), run as each client runs them: the
// hook command from the client's hook file with that client's hook input, from the folder the
// client runs hooks in; the MCP server from the client's MCP file with that client's variable
// substitution, in the folder the client starts servers in. docs/agents.md's support matrix
// rests on these tests.

var integrationsDir = filepath.Join("..", "..", "..", "integrations")

// readJSON decodes integrations/rel into v.
func readJSON(t *testing.T, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(integrationsDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// hookRun runs one hook the way a client does: a shell command line through sh -c, or an
// executable file, with PATH finding the binary.
type hookRun struct {
	shell string // sh -c command line ("" when file is set)
	file  string // executable to run (Cline's hook scripts)
}

func (h hookRun) run(t *testing.T, dir string, env []string, stdin string) result {
	t.Helper()
	var cmd *exec.Cmd
	if h.file != "" {
		cmd = exec.Command(h.file)
	} else {
		cmd = exec.Command("sh", "-c", h.shell)
	}
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
	cmd.Env = append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb syncBuf
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// hookCommands returns the command lines of event's hooks in a hook file decoded as
// {"hooks": {event: [...]}}, whether the entries are Claude-style groups ({"matcher", "hooks":
// [{"command"}]}) or flat ({"command"}).
func hookCommands(t *testing.T, rel, event string) []string {
	t.Helper()
	var f struct {
		Hooks map[string][]struct {
			Command string `json:"command"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	readJSON(t, rel, &f)
	var out []string
	for _, e := range f.Hooks[event] {
		if e.Command != "" {
			out = append(out, e.Command)
		}
		for _, h := range e.Hooks {
			out = append(out, h.Command)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no %s hook", rel, event)
	}
	return out
}

func TestIntegrationHooks(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		client, hooks, event string
		hook                 func(t *testing.T) hookRun
		runIn                string // where the client runs the hook: "home", "cursor" (~/.cursor), "root", "elsewhere"
		fixture              string
		allow, refused       expectation
	}{
		{client: "codex", hooks: "codex/.codex/hooks.json", event: "PreToolUse", runIn: "elsewhere",
			fixture: "codex/pretooluse-bash-npm-publish.json", allow: expectation{0, "", ""}, refused: expectation{2, "", "outcome is unknown"}},
		{client: "cursor", hooks: "cursor/.cursor/hooks.json", event: "preToolUse", runIn: "cursor",
			fixture: "cursor/pretooluse-shell-git-push.json", allow: expectation{0, `\{"permission":"allow"\}\n`, ""}, refused: expectation{0, `\{"permission":"deny",.*\}\n`, ""}},
		{client: "cursor (MCP: prefix)", hooks: "cursor/.cursor/hooks.json", event: "preToolUse", runIn: "cursor",
			fixture: "cursor/pretooluse-mcp-prefixed.json", allow: expectation{0, `\{"permission":"allow"\}\n`, ""}, refused: expectation{0, `\{"permission":"deny",.*\}\n`, ""}},
		{client: "cline", runIn: "root", hook: func(t *testing.T) hookRun {
			p, err := filepath.Abs(filepath.Join(integrationsDir, "cline", ".clinerules", "hooks", "PreToolUse"))
			if err != nil {
				t.Fatal(err)
			}
			return hookRun{file: p}
		}, fixture: "cline/pretooluse-execute-command-git-push.json", allow: expectation{0, `\{"cancel":false\}\n`, ""}, refused: expectation{0, `\{"cancel":true,"errorMessage":".*it already fired.*"\}\n`, ""}},
		{client: "windsurf", hooks: "windsurf/.windsurf/hooks.json", event: "pre_run_command", runIn: "home",
			fixture: "windsurf/pre-run-command-git-push.json", allow: expectation{0, "", ""}, refused: expectation{2, "", "it already fired"}},
		{client: "vscode", hooks: "vscode/.github/hooks/agent-rewind.json", event: "PreToolUse", runIn: "home",
			fixture: "vscode/pretooluse-run-in-terminal-git-push.json", allow: expectation{0, "", ""}, refused: expectation{2, `\{"hookSpecificOutput":\{.*"permissionDecision":"deny".*\}\}\n`, "outcome is unknown"}},
		{client: "gemini-cli", hooks: "gemini-cli/.gemini/settings.json", event: "BeforeTool", runIn: "elsewhere",
			fixture: "gemini-cli/beforetool-shell-git-push.json", allow: expectation{0, `\{\}\n`, ""}, refused: expectation{2, "", "it already fired"}},
	} {
		t.Run(c.client, func(t *testing.T) {
			var h hookRun
			if c.hook != nil {
				h = c.hook(t)
			} else {
				cmds := hookCommands(t, c.hooks, c.event)
				if len(cmds) != 1 {
					t.Fatalf("%s: %d %s hooks, want one", c.hooks, len(cmds), c.event)
				}
				// docs/agents.md: these clients' hooks run the small hook binary.
				if small := map[string]bool{"codex": true, "cursor": true, "cursor (MCP: prefix)": true, "vscode": true}[c.client]; small != strings.HasPrefix(cmds[0], "agent-rewind-hook guard") {
					t.Fatalf("%s: %s hook %q: want agent-rewind-hook guard: %v", c.hooks, c.event, cmds[0], small)
				}
				h = hookRun{shell: cmds[0]}
			}
			dir := map[string]string{"home": home, "cursor": filepath.Join(home, ".cursor"), "root": "/", "elsewhere": t.TempDir()}[c.runIn]
			if dir == "/" {
				protectRoot(t)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil && dir != "/" {
				t.Fatal(err)
			}
			project := filepath.Join(t.TempDir(), "my project")
			if err := os.Mkdir(project, 0o755); err != nil {
				t.Fatal(err)
			}
			env := envWithout([]string{"HOME", "CLAUDE_PROJECT_DIR", "PATH"}, "HOME="+home)
			in := clientFixture(t, c.fixture, project)
			check := func(what string, r result, want expectation) {
				t.Helper()
				if r.code != want.code || !regexp.MustCompile(`^(?s:`+want.stdout+`)$`).MatchString(r.stdout) || !strings.Contains(r.stderr, want.stderr) {
					t.Fatalf("%s: %+v, want %+v", what, r, want)
				}
			}
			check("admitted", h.run(t, dir, env, in), c.allow)
			again := regexp.MustCompile(`"tool_use_id":\s*"([^"]*)"`).ReplaceAllString(in, `"tool_use_id": "${1}_again"`)
			check("repeat", h.run(t, dir, env, again), c.refused)
			if ledgerRecord(t, project, onlyKey(t, project)) == nil {
				t.Fatal("not recorded in the project the input names")
			}
			if dir != "/" {
				noStoreFor(t, dir)
			}
			verifyChain(t, project)
		})
	}
}

// mcpArgs returns the args of the agent-rewind server in an MCP file whose servers are under key
// ("mcpServers", or VS Code's "servers").
func mcpArgs(t *testing.T, rel, key string) []string {
	t.Helper()
	var top map[string]json.RawMessage
	readJSON(t, rel, &top)
	var servers map[string]struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	if err := json.Unmarshal(top[key], &servers); err != nil {
		t.Fatalf("%s %s: %v", rel, key, err)
	}
	s, ok := servers["agent-rewind"]
	// The Claude Code plugin runs its launcher, which execs the binary (plugin_launcher_test.go).
	if !ok || (s.Command != "agent-rewind" && !(strings.HasPrefix(rel, "claude-code/") && s.Command == pluginCommand)) {
		t.Fatalf("%s: no agent-rewind server under %q: %+v", rel, key, servers)
	}
	return s.Args
}

func TestIntegrationMCP(t *testing.T) {
	home := t.TempDir()
	codexArgs := func(t *testing.T) []string {
		b, err := os.ReadFile(filepath.Join(integrationsDir, "codex", ".codex", "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^args = \[(.*)\]$`).FindStringSubmatch(string(b))
		var args []string
		if m == nil || json.Unmarshal([]byte("["+m[1]+"]"), &args) != nil {
			t.Fatalf("codex config.toml: no args line")
		}
		return args
	}
	for _, c := range []struct {
		client string
		args   func(t *testing.T) []string
		// subst replaces the client's variables (or the placeholder a person replaces) with project.
		subst map[string]bool
		dir   string // where the client starts the server: "home", "root", "cache", "project/sub"
		env   []string
	}{
		{client: "claude-code plugin (user scope)", args: func(t *testing.T) []string { return mcpArgs(t, "claude-code/.mcp.json", "mcpServers") },
			subst: map[string]bool{"${CLAUDE_PROJECT_DIR}": true}, dir: "cache", env: []string{"CLAUDE_PROJECT_DIR=$P"}},
		{client: "claude-code plugin, no substitution", args: func(t *testing.T) []string { return mcpArgs(t, "claude-code/.mcp.json", "mcpServers") },
			dir: "cache", env: []string{"CLAUDE_PROJECT_DIR=$P"}},
		{client: "cursor", args: func(t *testing.T) []string { return mcpArgs(t, "cursor/.cursor/mcp.json", "mcpServers") },
			subst: map[string]bool{"${workspaceFolder}": true}, dir: "home"},
		{client: "vscode", args: func(t *testing.T) []string { return mcpArgs(t, "vscode/.vscode/mcp.json", "servers") },
			subst: map[string]bool{"${workspaceFolder}": true}, dir: "home"},
		{client: "cline", args: func(t *testing.T) []string { return mcpArgs(t, "cline/cline_mcp_settings.json", "mcpServers") },
			subst: map[string]bool{"/absolute/path/to/your/project": true}, dir: "root"},
		{client: "windsurf", args: func(t *testing.T) []string { return mcpArgs(t, "windsurf/mcp_config.json", "mcpServers") },
			subst: map[string]bool{"/absolute/path/to/your/project": true}, dir: "home"},
		{client: "codex", args: codexArgs, subst: map[string]bool{"/absolute/path/to/this/project": true}, dir: "home"},
		{client: "gemini-cli", args: func(t *testing.T) []string { return mcpArgs(t, "gemini-cli/.gemini/settings.json", "mcpServers") }, dir: "project/sub"},
	} {
		t.Run(c.client, func(t *testing.T) {
			project := t.TempDir()
			sh(t, project, "git init -q . && mkdir sub && printf v1 > app.txt")
			var args []string
			for _, a := range c.args(t) {
				if c.subst[a] {
					a = project
				}
				args = append(args, a)
			}
			if c.dir == "root" {
				protectRoot(t)
			}
			dir := map[string]string{"home": home, "root": "/", "cache": filepath.Join(home, ".claude", "plugins", "cache", "m", "agent-rewind", "0.1.0"), "project/sub": filepath.Join(project, "sub")}[c.dir]
			if err := os.MkdirAll(dir, 0o755); err != nil && dir != "/" {
				t.Fatal(err)
			}
			env := envWithout([]string{"HOME", "CLAUDE_PROJECT_DIR", "REWIND_MCP_PROFILE"}, "HOME="+home)
			if c.client == "codex" { // Codex passes a short list of variables
				env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
				// Codex passes no REWIND_STATE_DIR: the store goes to the default state folder.
				t.Setenv("REWIND_STATE_DIR", filepath.Join(home, ".local", "state", "agent-rewind"))
			}
			for _, kv := range c.env {
				env = append(env, strings.ReplaceAll(kv, "$P", project))
			}
			cs, stderr := startMCPClient(t, dir, env, "", nil, args...)
			res := callTool(t, cs, "checkpoint", map[string]any{"label": c.client})
			if res.IsError {
				t.Fatalf("checkpoint: %s\nstderr:\n%s", resultText(res), stderr)
			}
			if !hasStore(t, project) {
				t.Fatalf("no store in the project; stderr:\n%s", stderr)
			}
			if dir != "/" && !strings.HasPrefix(dir, project) {
				noStoreFor(t, dir)
			}
		})
	}
}

// Where a client can fail closed, the shipped files make it: Cursor's preToolUse has
// "failClosed": true, and Cline's hook script exits non-zero (which Cline treats as a block)
// when agent-rewind cannot be found. (Claude Code's "onFailure": "block" is checked in
// TestClaudeCodePluginFiles.)
func TestIntegrationFailClosed(t *testing.T) {
	var cursor struct {
		Hooks map[string][]struct {
			Command    string `json:"command"`
			FailClosed bool   `json:"failClosed"`
		} `json:"hooks"`
	}
	readJSON(t, "cursor/.cursor/hooks.json", &cursor)
	if pre := cursor.Hooks["preToolUse"]; len(pre) != 1 || !pre[0].FailClosed {
		t.Fatalf("cursor preToolUse: %+v, want one hook with failClosed", pre)
	}
	for _, event := range []string{"beforeShellExecution", "beforeMCPExecution"} {
		if len(cursor.Hooks[event]) != 0 {
			t.Fatalf("cursor %s is registered too: a shell call would reach the guard twice", event)
		}
	}

	script, err := filepath.Abs(filepath.Join(integrationsDir, "cline", ".clinerules", "hooks", "PreToolUse"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=/nonexistent", "HOME=" + t.TempDir()}
	cmd.Stdin = strings.NewReader(clientFixture(t, "cline/pretooluse-execute-command-git-push.json", cmd.Dir))
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); !ok || cmd.ProcessState.ExitCode() == 0 {
		t.Fatalf("cline hook without agent-rewind: %v %q, want a non-zero exit", err, out)
	}
}
