package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/cli/internal/agentconfig"
	"github.com/agent-rewind/rewind/cli/internal/statebase"
	"github.com/agent-rewind/rewind/mcpserver"
)

// The shipped integration files against each client's facts (barrier.Client): the hook files
// register only events the client sends, every event the guard needs from it, matchers that
// let through every tool the guard must see, and the guard command each event needs.

// shippedHook is one hook a shipped file registers: its event, its matcher ("" for all tools)
// and the command line (or script) it runs.
type shippedHook struct {
	event, matcher, command string
}

// shippedHooks reads a client's shipped hook configuration.
func shippedHooks(t *testing.T, c *barrier.Client) []shippedHook {
	t.Helper()
	if c.Agent == barrier.AgentCline { // executables named for the event
		var out []shippedHook
		for _, name := range []string{"PreToolUse", "PostToolUse"} {
			p := filepath.Join(integrationsDir, "cline", ".clinerules", "hooks", name)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if st, _ := os.Stat(p); st.Mode()&0o111 == 0 {
				t.Fatalf("%s is not executable", p)
			}
			// The script file serves both of Cline's forms: the CLI's event and the extension's.
			events := map[string][]string{"PreToolUse": {barrier.EventClineToolCall, barrier.EventPreToolUse}, "PostToolUse": {barrier.EventClineToolResult, barrier.EventPostToolUse}}[name]
			for _, e := range events {
				out = append(out, shippedHook{e, "", string(b)})
			}
		}
		return out
	}
	rel := map[barrier.Agent]string{
		barrier.AgentClaudeCode: "claude-code/hooks/hooks.json", barrier.AgentCodex: "codex/.codex/hooks.json",
		barrier.AgentCursor: "cursor/.cursor/hooks.json", barrier.AgentWindsurf: "windsurf/.windsurf/hooks.json",
		barrier.AgentGemini: "gemini-cli/.gemini/settings.json", barrier.AgentVSCode: "vscode/.github/hooks/agent-rewind.json",
		barrier.AgentCopilot: "vscode/.github/hooks/agent-rewind.json",
	}[c.Agent]
	if rel == "" {
		t.Fatalf("%s: no shipped hook file known to this test: add it", c.Name)
	}
	var f struct {
		Hooks map[string][]struct {
			Matcher string   `json:"matcher"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
			Hooks   []struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	readJSON(t, rel, &f)
	var out []shippedHook
	for event, entries := range f.Hooks {
		for _, e := range entries {
			if e.Command != "" {
				out = append(out, shippedHook{event, e.Matcher, strings.Join(append([]string{e.Command}, e.Args...), " ")})
			}
			for _, h := range e.Hooks {
				out = append(out, shippedHook{event, e.Matcher, strings.Join(append([]string{h.Command}, h.Args...), " ")})
			}
		}
	}
	return out
}

func TestShippedHooksMatchClientFacts(t *testing.T) {
	guardCmd := regexp.MustCompile(`agent-rewind(-hook)?(\s+--workspace\s+\S+)?\s+guard( --checkpoint)?\b`)
	for _, c := range barrier.Clients() {
		t.Run(c.Name, func(t *testing.T) {
			hooks := shippedHooks(t, c)
			byEvent := map[string][]shippedHook{}
			for _, h := range hooks {
				role := c.Role(h.event)
				// .github/hooks serves VS Code and Copilot: an event only one of them sends is fine.
				if role == "" {
					t.Errorf("%s hook on %q, an event %s does not send (its events: %v)", c.Name, h.event, c.Name, c.Events)
				}
				m := guardCmd.FindStringSubmatch(h.command)
				if m == nil {
					t.Errorf("%s %s runs %q, not the guard", c.Name, h.event, h.command)
					continue
				}
				// Before a call, clients that name their calls get the automatic checkpoint.
				if wantCheckpoint := role == barrier.RoleDecide && c.Checkpoints(); wantCheckpoint && m[3] == "" {
					t.Errorf("%s %s runs %q: want guard --checkpoint (its calls are named: %q, or by agent-rewind: %v)", c.Name, h.event, m[0], c.CallID, c.NamesCalls)
				}
				if role != barrier.RoleDecide && m[3] != "" {
					t.Errorf("%s %s (a report) runs guard --checkpoint", c.Name, h.event)
				}
				byEvent[h.event] = append(byEvent[h.event], h)
			}
			// The tools each hook must see: shell and MCP tools (the effects), and before a call of
			// a client that names its calls, the file-editing tools (automatic checkpoints): what
			// doctor checks a user's hooks against too.
			for _, e := range c.Events {
				hs := byEvent[e.Name]
				switch {
				case e.Role == barrier.RoleReport:
					continue // nothing to do: registering it is optional
				case e.Role == barrier.RolePrompt:
					if len(hs) == 0 {
						t.Errorf("%s: no shipped hook on %s: its prompts are not logged", c.Name, e.Name)
					}
					continue // no tools: it has no matcher
				case len(hs) == 0 && c.Agent == barrier.AgentCursor && e.Role == barrier.RoleDecide && e.Name != barrier.EventCursorPreToolUse:
					continue // Cursor: preToolUse or before*Execution, never both (HOOKS.md)
				case len(hs) == 0:
					t.Errorf("%s: no shipped hook on %s (%s)", c.Name, e.Name, e.Role)
					continue
				}
				if c.Agent == barrier.AgentWindsurf {
					continue // one event per kind of call, no matchers
				}
				for _, tool := range agentconfig.ToolsToMatch(c, e.Role) {
					if !slices.ContainsFunc(hs, func(h shippedHook) bool { return agentconfig.Matches(h.matcher, tool) }) {
						t.Errorf("%s %s: no shipped hook's matcher lets %q through (matchers %q)", c.Name, e.Name, tool, matchersOf(hs))
					}
				}
			}
		})
	}
}

func matchersOf(hs []shippedHook) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.matcher)
	}
	return out
}

// The Codex server's configuration passes on every variable that says where the store is, so
// that the server, which gets only Codex's short list, and the hooks, which get its whole
// environment, use one store.
func TestShippedCodexConfigKeepsOneStore(t *testing.T) {
	var read []string
	statebase.Dir(func(k string) string { read = append(read, k); return "" })
	b, err := os.ReadFile(filepath.Join(integrationsDir, "codex", ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^env_vars = (\[.*\])$`).FindSubmatch(b)
	var passed []string
	if m == nil || json.Unmarshal(m[1], &passed) != nil {
		t.Fatalf("codex config.toml: no env_vars list")
	}
	codex := barrier.ClientOf(barrier.AgentCodex)
	for _, k := range append(read, mcpserver.EnvProfile) {
		if !slices.Contains(passed, k) && !slices.Contains(codex.MCPEnvOnly, k) {
			t.Errorf("%s is read to find the store (or the server's profile) but neither Codex's list %v nor the config's env_vars %v passes it", k, codex.MCPEnvOnly, passed)
		}
	}
}

// None of agent-rewind's own MCP tools is an effect under the built-in rules, however a client
// names it, and each client's name for them is recognised as agent-rewind's: no automatic
// checkpoint before them (they checkpoint by themselves).
func TestOwnToolsByEveryClient(t *testing.T) {
	rs := barrier.DefaultRules()
	for _, c := range barrier.Clients() {
		for _, tool := range mcpserver.ProfileAll.Tools() {
			name := c.MCPToolName(mcpserver.ServerName, tool)
			in := barrier.Input{Agent: c.Agent, Event: c.EventsOf(barrier.RoleDecide)[0], ToolName: name, ToolInput: json.RawMessage(`{}`), MCPTool: true}
			if m := rs.Classify(in); m != nil {
				t.Errorf("%s %s: classified as %s", c.Name, name, m.Rule)
			}
		}
	}
}

// docs/agents.md has a section for each client, and names the version its facts were measured
// with.
func TestAgentsDocNamesEachClientsVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	version := regexp.MustCompile(`\d+\.\d+\.\d+`)
	for _, c := range barrier.Clients() {
		name := strings.TrimPrefix(c.Name, "GitHub ")
		if !regexp.MustCompile(`(?m)^## .*` + regexp.QuoteMeta(name)).MatchString(doc) {
			t.Errorf("docs/agents.md has no section for %s", c.Name)
		}
		if strings.Contains(c.Checked, "run against a mock model") {
			if v := version.FindString(c.Checked); v == "" || !strings.Contains(doc, v) {
				t.Errorf("docs/agents.md does not name %s %s, the version its facts were measured with (%s)", c.Name, v, c.Checked)
			}
		}
	}
}
