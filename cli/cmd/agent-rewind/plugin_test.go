package main

import (
	"bytes"
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

// pluginDir is the Claude Code plugin folder of the repository.
var pluginDir = filepath.Join("..", "..", "..", "integrations", "claude-code")

// decodeStrict decodes one JSON file into v, rejecting unknown members (a misspelled key in a
// plugin file is silently ignored by Claude Code, so the test must catch it).
func decodeStrict(t *testing.T, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pluginDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	if dec.More() {
		t.Fatalf("%s: more than one JSON value", rel)
	}
}

// The guard command the plugin's hooks run, in exec form: Claude Code substitutes
// ${CLAUDE_PROJECT_DIR} into each argument and runs no shell (PowerShell would expand
// "$CLAUDE_PROJECT_DIR" to nothing).
var pluginGuardArgs = []string{"--workspace", "${CLAUDE_PROJECT_DIR}", "guard"}

// pluginPreToolUseArgs is the PreToolUse hook's command: the guard that also takes the
// automatic checkpoint before a call that can change files.
var pluginPreToolUseArgs = append(slices.Clone(pluginGuardArgs), "--checkpoint")

// pluginCommand is what the plugin's MCP server runs: its own launcher script, which finds the
// native binary once (no Go toolchain, no npx per call).
const pluginCommand = "${CLAUDE_PLUGIN_ROOT}/bin/agent-rewind"

// pluginHookCommand is what the plugin's hooks run: the launcher of agent-rewind-hook, the guard
// alone, which falls back to agent-rewind.
const pluginHookCommand = "${CLAUDE_PLUGIN_ROOT}/bin/agent-rewind-hook"

func TestClaudeCodePluginFiles(t *testing.T) {
	var manifest struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Description string `json:"description"`
		Author      struct {
			Name string `json:"name"`
		} `json:"author"`
		Homepage   string   `json:"homepage"`
		License    string   `json:"license"`
		Repository string   `json:"repository"`
		Keywords   []string `json:"keywords"`
	}
	decodeStrict(t, ".claude-plugin/plugin.json", &manifest)
	if manifest.Name != "agent-rewind" || manifest.License != "FSL-1.1-ALv2" || !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(manifest.Version) || manifest.Description == "" {
		t.Fatalf("plugin.json: %+v", manifest)
	}

	var mcp struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	decodeStrict(t, ".mcp.json", &mcp)
	// A user-scope plugin's server starts in the plugin cache: name the project explicitly.
	if s, ok := mcp.MCPServers["agent-rewind"]; len(mcp.MCPServers) != 1 || !ok || s.Command != pluginCommand || !slices.Equal(s.Args, []string{"--workspace", "${CLAUDE_PROJECT_DIR}", "mcp"}) {
		t.Fatalf(".mcp.json: %+v", mcp)
	}

	type hook struct {
		Type      string   `json:"type"`
		Command   string   `json:"command"`
		Args      []string `json:"args"`
		Timeout   *int     `json:"timeout"`
		OnFailure string   `json:"onFailure"`
	}
	type group struct {
		Matcher string `json:"matcher"`
		Hooks   []hook `json:"hooks"`
	}
	var hooks struct {
		Description string             `json:"description"`
		Hooks       map[string][]group `json:"hooks"`
	}
	decodeStrict(t, "hooks/hooks.json", &hooks)
	var events []string
	for e := range hooks.Hooks {
		events = append(events, e)
	}
	slices.Sort(events)
	if want := []string{"PermissionDenied", "PostToolUse", "PostToolUseFailure", "PreToolUse", "UserPromptSubmit"}; !slices.Equal(events, want) {
		t.Fatalf("hook events %v, want %v", events, want)
	}
	for event, groups := range hooks.Hooks {
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Fatalf("%s: want one matcher with one hook: %+v", event, groups)
		}
		g := groups[0]
		if event == "UserPromptSubmit" {
			// The prompt, logged to group the calls by it: no tool, no matcher; never blocking.
			if h := g.Hooks[0]; g.Matcher != "" || h.Command != pluginHookCommand || !slices.Equal(h.Args, pluginGuardArgs) || h.OnFailure != "" || h.Timeout == nil {
				t.Errorf("%s: %+v, want the guard (no --checkpoint), no matcher, a timeout, no onFailure", event, g)
			}
			continue
		}
		re, err := regexp.Compile(g.Matcher)
		if err != nil {
			t.Fatalf("%s: matcher %q: %v", event, g.Matcher, err)
		}
		anchored := regexp.MustCompile(`^(?:` + g.Matcher + `)$`)
		for _, tool := range []string{"Bash", "PowerShell", "mcp__slack__slack_post_message", "mcp__stripe__create_refund", "mcp__plugin_agent-rewind_agent-rewind__guard_effect"} {
			if !anchored.MatchString(tool) {
				t.Errorf("%s: matcher %q does not match %s", event, g.Matcher, tool)
			}
		}
		// Before a call, the editing tools too (an automatic checkpoint); after one, only the
		// calls that can be effects.
		editing := []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}
		for _, tool := range editing {
			if anchored.MatchString(tool) != (event == "PreToolUse") {
				t.Errorf("%s: matcher %q matches %s: %v", event, g.Matcher, tool, anchored.MatchString(tool))
			}
		}
		for _, tool := range []string{"Read", "Glob", "Grep", "WebFetch"} {
			if re.MatchString(tool) {
				t.Errorf("%s: matcher %q matches %s: the guard would run for nothing", event, g.Matcher, tool)
			}
		}
		want := pluginGuardArgs
		if event == "PreToolUse" {
			want = pluginPreToolUseArgs
		}
		h := g.Hooks[0]
		if h.Type != "command" || h.Command != pluginHookCommand || !slices.Equal(h.Args, want) {
			t.Errorf("%s: hook %+v, want exec form %s %q", event, h, pluginHookCommand, want)
		}
		// Only the deciding event blocks when the guard cannot run: a missing binary must not let
		// effects run unguarded; a failed report is shown and changes nothing.
		if want := map[bool]string{true: "block", false: ""}[event == "PreToolUse"]; h.OnFailure != want {
			t.Errorf("%s: onFailure %q, want %q", event, h.OnFailure, want)
		}
		// Claude Code's timeout is in seconds; without one it waits 10 minutes.
		if h.Timeout == nil || *h.Timeout < 5 || *h.Timeout > 120 {
			t.Errorf("%s: timeout %v: give an explicit timeout in seconds (5 to 120)", event, h.Timeout)
		}
	}

	readme, err := os.ReadFile(filepath.Join(pluginDir, "README.md"))
	if err != nil || !strings.Contains(string(readme), "--plugin-dir") || !strings.Contains(string(readme), "Only exit code 2 blocks") {
		t.Fatalf("README.md: %v", err)
	}
}

// The hooks work as Claude Code runs them: exec form, ${CLAUDE_PLUGIN_ROOT} and
// ${CLAUDE_PROJECT_DIR} substituted (here a path with a space), from any working directory,
// through the plugin's launcher with the binary on PATH.
func TestClaudeCodePluginHookCommand(t *testing.T) {
	project := filepath.Join(t.TempDir(), "my project")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	_, env := pluginLauncher(t, filepath.Dir(bin))
	launcher := pluginHookLauncher(t)
	hook := func(input string) result {
		t.Helper()
		var in struct {
			Event string `json:"hook_event_name"`
		}
		json.Unmarshal([]byte(input), &in)
		var args []string
		for _, a := range map[bool][]string{true: pluginPreToolUseArgs, false: pluginGuardArgs}[in.Event == "PreToolUse"] {
			args = append(args, strings.ReplaceAll(a, "${CLAUDE_PROJECT_DIR}", project))
		}
		cmd := exec.Command(launcher, args...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(env, "CLAUDE_PROJECT_DIR="+project)
		cmd.Stdin = strings.NewReader(input)
		return collect(t, cmd)
	}
	// A report after a call that is not an effect creates nothing.
	if r := hook(bashHook(t, "PostToolUse", "ls -la", "toolu_p0")); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("report: %+v", r)
	}
	noStore(t, project)
	// Before a call: the automatic checkpoint (the first one creates the store), silently.
	if r := hook(bashHook(t, "PreToolUse", "ls -la", "toolu_p0")); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("non-effect: %+v", r)
	}
	if got := run(t, project, "", "--workspace", project, "rewind", "--dry-run", "toolu_p0"); got.code != 0 {
		t.Fatalf("no automatic checkpoint before toolu_p0: %+v", got)
	}
	if r := hook(bashHook(t, "PreToolUse", "docker push registry.example.com/app:1.2", "toolu_p1")); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("PreToolUse: %+v", r)
	}
	if r := hook(bashHook(t, "PostToolUse", "docker push registry.example.com/app:1.2", "toolu_p1")); r.code != 0 || r.stdout != "" {
		t.Fatalf("PostToolUse: %+v", r)
	}
	if rec := ledgerRecord(t, project, onlyKey(t, project)); rec.State != barrier.Spent || rec.Rule != "image-push" {
		t.Fatalf("record in $CLAUDE_PROJECT_DIR: %+v", rec)
	}
	ps := hookInput(t, "PreToolUse", "PowerShell", map[string]any{"command": "docker push registry.example.com/app:1.2"}, "toolu_p2", nil)
	if r := hook(ps); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "it already fired") {
		t.Fatalf("repeat through PowerShell: %+v", r)
	}
	verifyChain(t, project)
}
