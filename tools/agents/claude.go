package agents

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Claude Code, as the harness runs it: `claude -p` (headless) against the mock model through
// ANTHROPIC_BASE_URL with a dummy key, nothing else reachable, every tool the scripts call
// allowed up front (--dangerously-skip-permissions refuses to run as root, which CI may be).
const (
	ClaudeVersion = "2.1.328" // tools/agents/clients/package.json

	// ClaudePluginServer prefixes the tools of the plugin's MCP server; ClaudeAddedServer those
	// of the server `claude mcp add agent-rewind -- agent-rewind mcp` registers; ClaudeShop the
	// shop server's.
	ClaudePluginServer = "mcp__plugin_agent-rewind_agent-rewind__"
	ClaudeAddedServer  = "mcp__agent-rewind__"
	ClaudeShop         = "mcp__shop__"
)

// ClaudeSession is one `claude -p` run.
type ClaudeSession struct {
	Result
	SessionID string            // from the stream's init message
	Init      map[string]any    // the stream's init message: tools, MCP servers, plugins, version
	Messages  []json.RawMessage // every line of the stream-json output
}

// ClaudeEnv is what Claude Code needs to talk to m and to nothing else.
func ClaudeEnv(m *Model) []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + m.URL,
		"ANTHROPIC_API_KEY=sk-ant-harness-dummy",
		// No update check, telemetry, error reporting or feedback survey.
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
}

// PluginDir is the shipped plugin, loaded as the README's quick start shows:
// claude --plugin-dir /path/to/rewind/integrations/claude-code.
func PluginDir() (string, error) {
	root, err := RepoRoot()
	return filepath.Join(root, "integrations", "claude-code"), err
}

// Claude runs `claude -p prompt --output-format stream-json --verbose` in dir against m, with
// the plugin loaded when plugin is set, allowing Bash, Write, Edit and every tool of the
// agent-rewind servers and the shop.
func (e *Env) Claude(m *Model, dir string, plugin bool, prompt string) ClaudeSession {
	e.T.Helper()
	args := []string{"-p", prompt, "--output-format", "stream-json", "--verbose",
		"--allowedTools", "Bash", "Write", "Edit", "mcp__plugin_agent-rewind_agent-rewind", "mcp__agent-rewind", "mcp__shop"}
	if plugin {
		p, err := PluginDir()
		if err != nil {
			e.T.Fatal(err)
		}
		args = append(args, "--plugin-dir", p)
	}
	r := e.Run(dir, 3*time.Minute, ClaudeEnv(m), e.Client("claude"), args...)
	s := ClaudeSession{Result: r}
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := json.RawMessage(append([]byte(nil), sc.Bytes()...))
		s.Messages = append(s.Messages, line)
		var msg map[string]any
		if json.Unmarshal(line, &msg) == nil && msg["type"] == "system" && msg["subtype"] == "init" {
			s.Init = msg
			s.SessionID, _ = msg["session_id"].(string)
		}
	}
	if r.Code != 0 || r.TimedOut {
		e.T.Errorf("claude -p in %s: exit %d (timed out: %v) after %v\nstderr: %s\nstdout (end): %s", dir, r.Code, r.TimedOut, r.Wall.Round(time.Millisecond), r.Stderr, tail(r.Stdout, 2000))
	}
	return s
}

// ClaudeMCPAdd runs `claude mcp add NAME -- COMMAND...` in dir (its default, local scope: the
// project's entry in ~/.claude.json), as a user registers a server.
func (e *Env) ClaudeMCPAdd(dir string, scope string, name string, command ...string) {
	e.T.Helper()
	args := []string{"mcp", "add"}
	if scope != "" {
		args = append(args, "--scope", scope)
	}
	args = append(append(args, name, "--"), command...)
	r := e.Run(dir, time.Minute, []string{"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, e.Client("claude"), args...)
	if r.Code != 0 {
		e.T.Fatalf("claude %s in %s: exit %d\n%s%s", strings.Join(args, " "), dir, r.Code, r.Stdout, r.Stderr)
	}
}

// ClaudeSettingsHooks installs the plugin's hooks without the plugin, as its README says: "copy
// the hooks member of hooks/hooks.json into .claude/settings.json" of the project.
func (e *Env) ClaudeSettingsHooks() {
	e.T.Helper()
	plugin, err := PluginDir()
	if err != nil {
		e.T.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(plugin, "hooks", "hooks.json"))
	if err != nil {
		e.T.Fatal(err)
	}
	var file struct {
		Hooks json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(b, &file); err != nil || len(file.Hooks) == 0 {
		e.T.Fatalf("the plugin's hooks/hooks.json has no hooks member: %v", err)
	}
	settings, err := json.MarshalIndent(map[string]json.RawMessage{"hooks": file.Hooks}, "", "  ")
	if err != nil {
		e.T.Fatal(err)
	}
	e.WriteFile(filepath.Join(e.Project, ".claude", "settings.json"), string(settings)+"\n")
}

// ClaudeTranscripts returns the session transcripts Claude Code wrote (JSONL files under
// ~/.claude/projects/<the folder, slashes as dashes>/), by session id.
func (e *Env) ClaudeTranscripts() map[string]string {
	files, _ := filepath.Glob(filepath.Join(e.Home, ".claude", "projects", "*", "*.jsonl"))
	out := map[string]string{}
	for _, f := range files {
		out[strings.TrimSuffix(filepath.Base(f), ".jsonl")] = f
	}
	return out
}
