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
)

// agent-rewind setup and doctor, run as a person runs them: the real binary in a project's
// subfolder, with a home folder of the test's own; the hooks setup writes are then run the way
// each client runs them, with that client's own payloads and without agent-rewind on PATH (the
// paths setup writes are absolute).

// setupWorld is a project (a git repository with a subfolder, its path holding a space) and a
// home folder, both new.
type setupWorld struct {
	home, project, sub string
	env                []string
}

func newSetupWorld(t *testing.T) setupWorld {
	t.Helper()
	w := setupWorld{home: t.TempDir(), project: filepath.Join(t.TempDir(), "my shop")}
	w.sub = filepath.Join(w.project, "web")
	if err := os.MkdirAll(w.sub, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, w.project, "git init -q . && printf v1 > app.txt")
	w.env = envWithout([]string{"HOME", "CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_STATE_HOME"}, "HOME="+w.home)
	return w
}

// setupJSON is what the tests read of agent-rewind --json setup.
type setupJSON struct {
	Client    string `json:"client"`
	Scope     string `json:"scope"`
	Workspace string `json:"workspace"`
	Binaries  struct {
		Rewind string `json:"agentRewind"`
		Hook   string `json:"agentRewindHook"`
	} `json:"binaries"`
	DryRun bool `json:"dryRun"`
	Remove bool `json:"remove"`
	Files  []struct {
		Path    string `json:"path"`
		What    string `json:"what"`
		Action  string `json:"action"`
		Changes []struct {
			Op, At, Value string
		} `json:"changes"`
		Kept []struct{ At, Why string } `json:"kept"`
	} `json:"files"`
	Notes           []string `json:"notes"`
	WorkspaceChoice struct {
		Root, Rule, Folder, By string
	} `json:"workspaceChoice"`
}

func (w setupWorld) setup(t *testing.T, args ...string) (setupJSON, result) {
	t.Helper()
	r := runIn(t, w.sub, w.env, "", append([]string{"--json", "setup"}, args...)...)
	var out setupJSON
	if r.code == 0 {
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("setup --json: %v\n%s", err, r.stdout)
		}
	}
	return out, r
}

// writtenHook is the deciding hook a client's written file runs, as that client runs it.
func writtenHook(t *testing.T, client, file string) (hookRun, []string) {
	t.Helper()
	if client == "cline" {
		return hookRun{file: file}, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Hooks map[string][]struct {
			Command string `json:"command"`
			Hooks   []struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	event := map[string]string{"cursor": "preToolUse", "windsurf": "pre_run_command", "gemini": "BeforeTool"}[client]
	if event == "" {
		event = "PreToolUse"
	}
	entries := f.Hooks[event]
	if len(entries) != 1 {
		t.Fatalf("%s: %d %s entries, want setup's one:\n%s", file, len(entries), event, b)
	}
	if entries[0].Command != "" {
		return hookRun{shell: entries[0].Command}, nil
	}
	h := entries[0].Hooks[0]
	if len(h.Args) > 0 { // exec form: no shell
		return hookRun{}, append([]string{h.Command}, h.Args...)
	}
	return hookRun{shell: h.Command}, nil
}

// TestSetupHooksGuard: for each client, setup run in a subfolder writes the project's files
// (the folder hook.Choose picks, said in its output) with absolute paths; the deciding hook it
// wrote, run as the client runs it with agent-rewind nowhere on PATH, admits the client's git
// push and refuses it again; --remove then leaves the project as it was.
func TestSetupHooksGuard(t *testing.T) {
	for _, c := range []struct {
		client, hooks, fixture string
	}{
		{"claude-code", ".claude/settings.json", "claude-code/pretooluse-bash-git-push.json"},
		{"codex", ".codex/hooks.json", "codex/pretooluse-bash-npm-publish.json"},
		{"cursor", ".cursor/hooks.json", "cursor/pretooluse-shell-git-push.json"},
		{"cline", ".clinerules/hooks/PreToolUse", "cline/real-3.0.65-tool_call-run_commands-git-push.json"},
		{"windsurf", ".windsurf/hooks.json", "windsurf/pre-run-command-git-push.json"},
		{"vscode", ".github/hooks/agent-rewind.json", "vscode/pretooluse-run-in-terminal-git-push.json"},
		{"copilot", ".github/hooks/agent-rewind.json", "copilot/pretooluse-bash-git-push.json"},
		{"gemini", ".gemini/settings.json", "gemini-cli/beforetool-shell-git-push.json"},
	} {
		t.Run(c.client, func(t *testing.T) {
			w := newSetupWorld(t)
			out, r := w.setup(t, c.client)
			if r.code != 0 {
				t.Fatalf("setup %s: exit %d\n%s%s", c.client, r.code, r.stdout, r.stderr)
			}
			if out.Workspace != w.project || out.WorkspaceChoice.Folder != w.sub || out.WorkspaceChoice.By != "repository" {
				t.Errorf("setup in %s chose %s (%+v), want the repository %s", w.sub, out.Workspace, out.WorkspaceChoice, w.project)
			}
			if out.Binaries.Rewind != bin || out.Binaries.Hook != hookBin {
				t.Errorf("binaries %+v, want %s and %s", out.Binaries, bin, hookBin)
			}
			for _, f := range out.Files {
				if f.Action != "create" || len(f.Changes) == 0 || !filepath.IsAbs(f.Path) {
					t.Errorf("%s: %s with %d changes", f.Path, f.Action, len(f.Changes))
				}
			}
			hookFile := filepath.Join(w.project, filepath.FromSlash(c.hooks))
			h, argv := writtenHook(t, c.client, hookFile)
			// The client's PATH has no agent-rewind: the written paths are absolute.
			env := append(envWithout([]string{"HOME", "PATH", "CLAUDE_PROJECT_DIR"}, "HOME="+w.home), "PATH=/usr/bin:/bin")
			in := clientFixture(t, c.fixture, w.project)
			again := regexp.MustCompile(`"(tool_use_id|id)":\s*"([^"]*)"`).ReplaceAllString(in, `"${1}": "${2}_again"`)
			elsewhere := t.TempDir()
			runHook := func(stdin string) result {
				if argv == nil {
					return h.run(t, elsewhere, env, stdin)
				}
				// Claude Code substitutes ${CLAUDE_PROJECT_DIR} in exec form's args.
				args := strings.Join(argv[1:], "\x00")
				args = strings.ReplaceAll(args, "${CLAUDE_PROJECT_DIR}", w.project)
				cmd := exec.Command(argv[0], strings.Split(args, "\x00")...)
				cmd.Dir, cmd.Env, cmd.Stdin = elsewhere, env, strings.NewReader(stdin)
				return collect(t, cmd)
			}
			first := runHook(in)
			if refusedBy(first) {
				t.Fatalf("the first push was refused: %+v", first)
			}
			second := runHook(again)
			if !refusedBy(second) || !strings.Contains(second.stdout+second.stderr, "agent-rewind refused effect") {
				t.Fatalf("the repeated push was not refused by the hook setup wrote: %+v", second)
			}
			if ledgerRecord(t, w.project, onlyKey(t, w.project)) == nil {
				t.Fatal("not recorded in the project")
			}

			out, r = w.setup(t, c.client, "--remove")
			if r.code != 0 || !out.Remove {
				t.Fatalf("setup --remove: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, f := range out.Files {
				if _, err := os.Stat(f.Path); err == nil {
					t.Errorf("%s is still there after --remove (%s)", f.Path, f.Action)
				}
			}
			if left := gitStatus(t, w.project); left != "?? app.txt\n" {
				t.Errorf("after --remove the project has more than before:\n%s", left)
			}
		})
	}
}

// refusedBy reports whether a hook's answer refuses the call, in any client's form.
func refusedBy(r result) bool {
	return r.code == 2 || strings.Contains(r.stdout, `"deny"`) || strings.Contains(r.stdout, `"cancel":true`) || strings.Contains(r.stdout, "overrideInput")
}

func gitStatus(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=all").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// Setup merges into a client's existing file, keeps the user's entries, is the same the second
// time, and --dry-run writes nothing.
func TestSetupMergesAndDryRun(t *testing.T) {
	w := newSetupWorld(t)
	settings := filepath.Join(w.project, ".gemini", "settings.json")
	mkdirs(t, filepath.Dir(settings))
	mine := `{"theme": "Dracula", "mcpServers": {"github": {"command": "gh-mcp"}}, "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}}`
	write(t, settings, mine, 0o644)
	out, r := w.setup(t, "gemini", "--dry-run")
	if r.code != 0 || !out.DryRun || out.Files[0].Action != "change" {
		t.Fatalf("--dry-run: exit %d %+v\n%s", r.code, out, r.stderr)
	}
	if b, _ := os.ReadFile(settings); string(b) != mine {
		t.Fatalf("--dry-run changed the file:\n%s", b)
	}
	if _, r = w.setup(t, "gemini"); r.code != 0 {
		t.Fatalf("setup: %+v", r)
	}
	b, _ := os.ReadFile(settings)
	for _, keep := range []string{"Dracula", "gh-mcp", "./lint.sh", bin} {
		if !strings.Contains(string(b), keep) {
			t.Errorf("after setup the settings lack %q:\n%s", keep, b)
		}
	}
	if out, _ = w.setup(t, "gemini"); out.Files[0].Action != "unchanged" {
		t.Errorf("a second setup: %+v", out.Files)
	}
	text := runIn(t, w.sub, w.env, "", "setup", "gemini")
	if text.code != 0 || !strings.Contains(text.stdout, "unchanged "+settings) || !strings.Contains(text.stdout, "nothing to change") {
		t.Errorf("setup's text output:\n%s", text.stdout)
	}
	if _, r = w.setup(t, "gemini", "--remove"); r.code != 0 {
		t.Fatalf("--remove: %+v", r)
	}
	var got, want any
	b, _ = os.ReadFile(settings)
	json.Unmarshal(b, &got)
	json.Unmarshal([]byte(mine), &want)
	if g, _ := json.Marshal(got); string(g) != string(mustJSON(t, want)) {
		t.Errorf("after --remove:\n%s\nwant the user's own:\n%s", b, mine)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A file setup cannot read: exit 1, the file named with what to do, nothing written.
func TestSetupRefusesAFileItCannotRead(t *testing.T) {
	w := newSetupWorld(t)
	settings := filepath.Join(w.project, ".claude", "settings.json")
	mkdirs(t, filepath.Dir(settings))
	bad := "{\n  // my settings\n  \"model\": \"opus\"\n}\n"
	write(t, settings, bad, 0o644)
	r := runIn(t, w.sub, w.env, "", "setup", "claude-code")
	if r.code != 1 || !strings.Contains(r.stderr, settings) || !strings.Contains(r.stderr, "comment") || !strings.Contains(r.stderr, "setup changed nothing") {
		t.Fatalf("setup with a commented settings.json: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(settings); string(b) != bad {
		t.Errorf("the file was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(w.project, ".mcp.json")); err == nil {
		t.Error(".mcp.json was written though setup refused")
	}
	r = runIn(t, w.sub, w.env, "", "--json", "setup", "claude-code")
	var e struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exitCode"`
	}
	if json.Unmarshal([]byte(r.stdout), &e) != nil || e.ExitCode != 1 || !strings.Contains(e.Error, settings) {
		t.Errorf("--json refusal: %q", r.stdout)
	}
	if r := runIn(t, w.sub, w.env, "", "setup", "emacs"); r.code != 1 || !strings.Contains(r.stderr, "claude-code, codex, cursor, cline, windsurf, vscode, copilot, gemini") {
		t.Errorf("an unknown client: exit %d %q", r.code, r.stderr)
	}
	if r := runIn(t, w.sub, w.env, "", "setup", "gemini", "--trust-hooks"); r.code != 1 || !strings.Contains(r.stderr, "--trust-hooks is for codex") {
		t.Errorf("--trust-hooks for gemini: exit %d %q", r.code, r.stderr)
	}
}

// Where a client reads a part only from the user's folder, setup says so and writes it only
// with --user: Cline's and Windsurf's MCP servers.
func TestSetupUserScope(t *testing.T) {
	w := newSetupWorld(t)
	out, r := w.setup(t, "windsurf")
	if r.code != 0 || len(out.Files) != 1 || !strings.Contains(strings.Join(out.Notes, "\n"), "agent-rewind setup windsurf --user") {
		t.Fatalf("setup windsurf: %+v\n%s", out, r.stderr)
	}
	out, r = w.setup(t, "windsurf", "--user")
	if r.code != 0 || out.Scope != "user" {
		t.Fatalf("setup windsurf --user: %+v\n%s", out, r.stderr)
	}
	cfg := filepath.Join(w.home, ".codeium", "windsurf", "mcp_config.json")
	b, err := os.ReadFile(cfg)
	if err != nil || !strings.Contains(string(b), `"--workspace", "`+w.project+`"`) {
		t.Fatalf("%s names no project (%v):\n%s", cfg, err, b)
	}
}

// doctorJSON is what the tests read of agent-rewind --json doctor.
type doctorJSON struct {
	OK        bool   `json:"ok"`
	Workspace string `json:"workspace"`
	Store     struct {
		Exists bool  `json:"exists"`
		Bytes  int64 `json:"bytes"`
	} `json:"store"`
	GuardServer struct {
		Running bool `json:"running"`
	} `json:"guardServer"`
	Chain *struct {
		OK   bool  `json:"ok"`
		Size int64 `json:"size"`
	} `json:"chain"`
	Clients []struct {
		Client string `json:"client"`
		Found  bool   `json:"found"`
	} `json:"clients"`
	Problems []struct {
		Client, Problem, Fix string
	} `json:"problems"`
}

func (w setupWorld) doctor(t *testing.T) (doctorJSON, result) {
	t.Helper()
	r := runIn(t, w.sub, w.env, "", "--json", "doctor")
	var d doctorJSON
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	return d, r
}

// TestDoctor: each problem it reports names the command that fixes it, and once that command
// ran, doctor exits 0.
func TestDoctor(t *testing.T) {
	w := newSetupWorld(t)
	d, r := w.doctor(t)
	if r.code != 1 || d.OK || len(d.Problems) != 1 || !strings.Contains(d.Problems[0].Fix, "agent-rewind setup CLIENT") || d.Workspace != w.project {
		t.Fatalf("doctor before setup: exit %d %+v", r.code, d)
	}
	// A copy of the binaries, so that one can go missing.
	dir := filepath.Join(t.TempDir(), "bin")
	sh(t, filepath.Dir(dir), "mkdir bin && cp '"+bin+"' '"+hookBin+"' bin/")
	cp := filepath.Join(dir, "agent-rewind")
	setup := func(args ...string) {
		t.Helper()
		r := runIn(t, w.sub, w.env, "", append([]string{"setup"}, args...)...)
		if r.code != 0 {
			t.Fatalf("setup %v: %+v", args, r)
		}
	}
	if r := runIn(t, w.sub, w.env, "", "checkpoint", "before"); r.code != 0 {
		t.Fatal(r)
	}
	cmd := exec.Command(cp, "setup", "claude-code")
	cmd.Dir, cmd.Env = w.sub, w.env
	if r := collect(t, cmd); r.code != 0 {
		t.Fatalf("setup with the copy: %+v", r)
	}
	d, r = w.doctor(t)
	if r.code != 0 || !d.OK || !d.Store.Exists || d.Chain == nil || !d.Chain.OK || d.Chain.Size == 0 {
		t.Fatalf("doctor after setup: exit %d %+v\n%s", r.code, d, r.stderr)
	}
	if text := runIn(t, w.sub, w.env, "", "doctor"); text.code != 0 || !strings.Contains(text.stdout, "ok: no problem found") || !strings.Contains(text.stdout, "claude-code   set up") {
		t.Errorf("doctor's text:\n%s", text.stdout)
	}

	// The hook's program goes missing.
	os.Remove(filepath.Join(dir, "agent-rewind-hook"))
	d, r = w.doctor(t)
	if r.code != 1 || !hasProblem(d, "agent-rewind-hook does not exist", "agent-rewind setup claude-code") {
		t.Errorf("doctor with the hook's program gone: exit %d %+v", r.code, d.Problems)
	}
	setup("claude-code")
	if d, r = w.doctor(t); r.code != 0 {
		t.Errorf("doctor after the fix: exit %d %+v", r.code, d.Problems)
	}

	// A matcher edited away from the MCP tools.
	settings := filepath.Join(w.project, ".claude", "settings.json")
	b, _ := os.ReadFile(settings)
	write(t, settings, strings.Replace(string(b), `"Bash|PowerShell|mcp__.*"`, `"Bash"`, 1), 0o644)
	d, r = w.doctor(t)
	if r.code != 1 || !hasProblem(d, "lets PowerShell, mcp__slack__slack_post_message by unguarded", "agent-rewind setup claude-code") {
		t.Errorf("doctor with an edited matcher: exit %d %+v", r.code, d.Problems)
	}
	// The fix doctor names: setup replaces the edited hook (agent-rewind's, not as setup wrote
	// it) with its own, and --remove would put the edited one back.
	out, r := w.setup(t, "claude-code")
	if r.code != 0 || !strings.Contains(r.stdout, "replaced by setup's") {
		t.Errorf("setup after the edit does not say it replaced the edited hook: %+v", out.Files)
	}
	if d, r = w.doctor(t); r.code != 0 {
		t.Errorf("doctor after the fix: exit %d %+v", r.code, d.Problems)
	}
}

func hasProblem(d doctorJSON, problem, fix string) bool {
	for _, p := range d.Problems {
		if strings.Contains(p.Problem, problem) && strings.Contains(p.Fix, fix) {
			return true
		}
	}
	return false
}

// The commands docs/agents.md shows for setup and doctor, and the README's, as written, in the
// order shown: each runs, setup's exit 0, doctor's 0 or 1 with what it found.
func TestDocsSetupCommands(t *testing.T) {
	w := newSetupWorld(t)
	var cmds []string
	for _, page := range []string{filepath.Join("..", "..", "..", "docs", "agents.md"), filepath.Join("..", "..", "..", "README.md")} {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				fence = !fence
				continue
			}
			cmd, _, _ := strings.Cut(line, "#")
			if fields := strings.Fields(cmd); fence && len(fields) > 1 && fields[0] == "agent-rewind" && (slices.Contains(fields, "setup") || slices.Contains(fields, "doctor")) {
				cmds = append(cmds, strings.TrimSpace(cmd))
			}
		}
	}
	if len(cmds) < 8 {
		t.Fatalf("found %d setup and doctor commands in the docs: %q", len(cmds), cmds)
	}
	for _, cmd := range cmds {
		args := strings.Fields(cmd)[1:]
		if slices.Contains(args, "--trust-hooks") {
			continue // asks the real Codex: TestCodexAfterSetup in tools/agents runs it
		}
		r := runIn(t, w.project, w.env, "", args...)
		doctor := slices.Contains(args, "doctor")
		if r.code != 0 && !(doctor && r.code == 1 && strings.Contains(r.stdout, "fix")) {
			t.Errorf("%s: exit %d\n%s%s", cmd, r.code, r.stdout, r.stderr)
		}
		if slices.Contains(args, "--json") && !json.Valid([]byte(r.stdout)) {
			t.Errorf("%s: not JSON: %s", cmd, r.stdout)
		}
	}
}
