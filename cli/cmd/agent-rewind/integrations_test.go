package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/barrier"
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
	// One of the package's slowest (each process a -race binary): run beside the others' tail.
	t.Parallel()
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
		{client: "cline", runIn: "root", hook: clineHook("PreToolUse"), fixture: "cline/pretooluse-execute-command-git-push.json", allow: expectation{0, `\{"cancel":false\}\n`, ""}, refused: expectation{0, `\{"cancel":true,"errorMessage":".*it already fired.*"\}\n`, ""}},
		{client: "windsurf", hooks: "windsurf/.windsurf/hooks.json", event: "pre_run_command", runIn: "home",
			fixture: "windsurf/pre-run-command-git-push.json", allow: expectation{0, "", ""}, refused: expectation{2, "", "it already fired"}},
		{client: "vscode", hooks: "vscode/.github/hooks/agent-rewind.json", event: "PreToolUse", runIn: "home",
			fixture: "vscode/pretooluse-run-in-terminal-git-push.json", allow: expectation{0, "", ""}, refused: expectation{0, `\{"hookSpecificOutput":\{.*"permissionDecision":"deny".*outcome is unknown.*\}\}\n`, ""}},
		{client: "copilot", hooks: "vscode/.github/hooks/agent-rewind.json", event: "PreToolUse", runIn: "home",
			fixture: "copilot/pretooluse-bash-git-push.json", allow: expectation{0, "", ""}, refused: expectation{0, `\{"hookSpecificOutput":\{.*"permissionDecision":"deny".*it already fired.*\}\}\n`, ""}},
		{client: "cline (CLI)", runIn: "root", hook: clineHook("PreToolUse"),
			fixture: "cline/real-3.0.65-tool_call-run_commands-git-push.json", allow: expectation{0, `\{"cancel":false\}\n`, ""}, refused: expectation{0, `\{"cancel":false,"overrideInput":\{"commands":\["printf .*outcome is unknown.*exit 2"\]\}\}\n`, ""}},
		{client: "gemini-cli", hooks: "gemini-cli/.gemini/settings.json", event: "BeforeTool", runIn: "elsewhere",
			fixture: "gemini-cli/beforetool-shell-git-push.json", allow: expectation{0, `\{\}\n`, ""}, refused: expectation{2, "", "it already fired"}},
		{client: "gemini-cli (MCP)", hooks: "gemini-cli/.gemini/settings.json", event: "BeforeTool", runIn: "elsewhere",
			fixture: "gemini-cli/beforetool-mcp-context-slack.json", allow: expectation{0, `\{\}\n`, ""}, refused: expectation{2, "", "it already fired"}},
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
				if small := !strings.HasPrefix(c.client, "windsurf"); small != strings.Contains(cmds[0], "agent-rewind-hook guard") {
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
			again := regexp.MustCompile(`"(tool_use_id|id)":\s*"([^"]*)"`).ReplaceAllString(in, `"${1}": "${2}_again"`)
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

// clineHook runs Cline's hook script for event, as Cline runs it: the executable file.
func clineHook(event string) func(t *testing.T) hookRun {
	return func(t *testing.T) hookRun {
		p, err := filepath.Abs(filepath.Join(integrationsDir, "cline", ".clinerules", "hooks", event))
		if err != nil {
			t.Fatal(err)
		}
		return hookRun{file: p}
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
	// One of the package's slowest (each process a -race binary): run beside the others' tail.
	t.Parallel()
	home := t.TempDir()
	codexArgs := func(t *testing.T) []string {
		var args []string
		if m := regexp.MustCompile(`(?m)^args = (\[.*\])$`).FindSubmatch(codexConfig(t)); m == nil || json.Unmarshal(m[1], &args) != nil {
			t.Fatalf("codex config.toml: no args line")
		}
		return args
	}
	for _, c := range []struct {
		client string
		args   func(t *testing.T) []string
		// subst replaces the client's variables (or the placeholder a person replaces) with project.
		subst map[string]bool
		dir   string // where the client starts the server: "home", "root", "cache", "project", "project/sub"
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
		// Copilot CLI 1.0.102 reads .github/mcp.json and starts its servers in the project.
		{client: "copilot", args: func(t *testing.T) []string { return mcpArgs(t, "vscode/.github/mcp.json", "mcpServers") }, dir: "project"},
		{client: "cline", args: func(t *testing.T) []string { return mcpArgs(t, "cline/cline_mcp_settings.json", "mcpServers") },
			subst: map[string]bool{"/absolute/path/to/your/project": true}, dir: "root"},
		{client: "windsurf", args: func(t *testing.T) []string { return mcpArgs(t, "windsurf/mcp_config.json", "mcpServers") },
			subst: map[string]bool{"/absolute/path/to/your/project": true}, dir: "home"},
		// Codex CLI 0.169.0 starts its servers in its working directory (measured), here a subfolder.
		{client: "codex", args: codexArgs, dir: "project/sub"},
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
			dir := map[string]string{"home": home, "root": "/", "cache": filepath.Join(home, ".claude", "plugins", "cache", "m", "agent-rewind", "0.1.0"),
				"project": project, "project/sub": filepath.Join(project, "sub")}[c.dir]
			if err := os.MkdirAll(dir, 0o755); err != nil && dir != "/" {
				t.Fatal(err)
			}
			env := envWithout([]string{"HOME", "CLAUDE_PROJECT_DIR", "REWIND_MCP_PROFILE"}, "HOME="+home)
			if c.client == "codex" {
				// Codex passes its server only a short list of variables, and those its env_vars
				// names: the server must find the store the hooks (Codex's whole environment,
				// with this test's REWIND_STATE_DIR) use.
				env = codexServerEnv(t, env)
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

func codexConfig(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(integrationsDir, "codex", ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// codexServerEnv is what Codex gives the shipped server out of its environment env: the
// variables of its short list (barrier's facts, measured on 0.169.0) and those the shipped
// config's env_vars names.
func codexServerEnv(t *testing.T, env []string) []string {
	t.Helper()
	var passed []string
	if m := regexp.MustCompile(`(?m)^env_vars = (\[.*\])$`).FindSubmatch(codexConfig(t)); m == nil || json.Unmarshal(m[1], &passed) != nil {
		t.Fatal("codex config.toml: no env_vars list")
	}
	passed = append(passed, barrier.ClientOf(barrier.AgentCodex).MCPEnvOnly...)
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); slices.Contains(passed, k) {
			out = append(out, kv)
		}
	}
	if !slices.ContainsFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "REWIND_STATE_DIR=") }) {
		t.Fatalf("the server's environment has no REWIND_STATE_DIR: %q", out)
	}
	return out
}

// Where a client can fail closed, the shipped files make it: Cursor's preToolUse has
// "failClosed": true. (Claude Code's "onFailure": "block" is checked in
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
}

// The shipped hooks of Gemini CLI, VS Code and Copilot, and Cline's scripts, which block a call
// when their program is missing (Gemini CLI on any exit but 0 and 1, Copilot on any non-zero
// exit, Cline's extension on a non-zero exit), let the call run when agent-rewind is not
// installed and say so; they run agent-rewind-hook where it is installed, else agent-rewind.
func TestIntegrationMissingBinary(t *testing.T) {
	onlyMain := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(onlyMain, "agent-rewind")); err != nil {
		t.Fatal(err)
	}
	both := t.TempDir()
	for _, b := range []string{bin, hookBin} {
		if err := os.Symlink(b, filepath.Join(both, filepath.Base(b))); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, fixture string
		hook          func(t *testing.T) hookRun
		missing       expectation
	}{
		{"gemini-cli", "gemini-cli/beforetool-shell-git-push.json", shippedShell("gemini-cli/.gemini/settings.json", "BeforeTool"),
			expectation{0, `\{"systemMessage":"agent-rewind is not on PATH, so the effect guard is NOT running; install it with: npm install -g @agent-rewind/mcp"\}\n`, ""}},
		{"copilot", "copilot/pretooluse-bash-git-push.json", shippedShell("vscode/.github/hooks/agent-rewind.json", "PreToolUse"),
			expectation{0, `\{"systemMessage":"agent-rewind is not on PATH.*"\}\n`, ""}},
		{"copilot PostToolUse", "copilot/posttooluse-bash.json", shippedShell("vscode/.github/hooks/agent-rewind.json", "PostToolUse"),
			expectation{0, `\{"systemMessage":"agent-rewind is not on PATH.*"\}\n`, ""}},
		{"cline", "cline/real-3.0.65-tool_call-run_commands-git-push.json", clineHook("PreToolUse"), expectation{0, `\{"cancel":false\}\n`, "agent-rewind is not on PATH, so the effect guard is NOT running"}},
		{"cline PostToolUse", "cline/real-3.0.65-tool_result-run_commands-git-push.json", clineHook("PostToolUse"), expectation{0, `\{"cancel":false\}\n`, ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := c.hook(t)
			for _, path := range []string{"/usr/bin:/bin", onlyMain + ":/usr/bin:/bin", both + ":/usr/bin:/bin"} {
				project := t.TempDir()
				in := clientFixture(t, c.fixture, project)
				cmd := exec.Command("sh", "-c", h.shell)
				if h.file != "" {
					cmd = exec.Command(h.file)
				}
				cmd.Dir, cmd.Stdin = project, strings.NewReader(in)
				cmd.Env = append(envWithout([]string{"PATH", "HOME"}, "HOME="+t.TempDir()), "PATH="+path)
				r := collect(t, cmd)
				want := c.missing
				if path != "/usr/bin:/bin" {
					// Installed: the guard answers as it does (the effect is admitted, the call runs).
					want = map[string]expectation{"gemini-cli": {0, `\{\}\n`, ""}, "cline": {0, `\{"cancel":false\}\n`, ""}, "cline PostToolUse": {0, `\{"cancel":false\}\n`, ""}}[c.name]
					if strings.HasPrefix(c.name, "copilot") {
						want = expectation{0, "", ""}
					}
				}
				if r.code != want.code || !regexp.MustCompile(`^(?s:`+want.stdout+`)$`).MatchString(r.stdout) || !strings.Contains(r.stderr, want.stderr) || (want.stderr == "") != (r.stderr == "") {
					t.Fatalf("PATH=%s: %+v, want %+v", path, r, want)
				}
				if effect := !strings.HasSuffix(c.name, "PostToolUse"); path != "/usr/bin:/bin" && effect && ledgerRecord(t, project, onlyKey(t, project)) == nil {
					t.Fatalf("PATH=%s: not recorded", path)
				} else if path == "/usr/bin:/bin" {
					noStoreFor(t, project)
				}
			}
		})
	}
}

// shippedShell is the one command line a shipped hook file runs for event, run through sh -c.
func shippedShell(rel, event string) func(t *testing.T) hookRun {
	return func(t *testing.T) hookRun {
		cmds := hookCommands(t, rel, event)
		if len(cmds) != 1 {
			t.Fatalf("%s: %d %s hooks, want one", rel, len(cmds), event)
		}
		return hookRun{shell: cmds[0]}
	}
}
