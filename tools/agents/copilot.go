package agents

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"
)

// GitHub Copilot CLI, as the harness runs it: `copilot -p` (headless) with its own model
// provider settings (BYOK) pointed at the mock as an Anthropic endpoint, offline (no GitHub
// sign-in, telemetry, web tools, GitHub MCP server or update), every tool allowed, and the
// project's folder trusted for the one session (--trust-folder), which is what makes it load
// the project's hooks and MCP servers.
const (
	CopilotVersion = "1.0.102" // tools/agents/clients/package.json

	// CopilotModel is the model it is told it talks to (it sizes its context from it).
	CopilotModel = "claude-sonnet-4.5"
)

// CopilotSession is one `copilot -p` run.
type CopilotSession struct {
	Result
	SessionID string           // from the output's result line
	Events    []map[string]any // every line of the JSON output
}

// CopilotEnv is what Copilot CLI needs to talk to m and to nothing else.
func CopilotEnv(m *Model) []string {
	return []string{
		"COPILOT_PROVIDER_BASE_URL=" + m.URL,
		"COPILOT_PROVIDER_TYPE=anthropic",
		"COPILOT_PROVIDER_API_KEY=sk-ant-harness-dummy",
		"COPILOT_MODEL=" + CopilotModel,
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
	}
}

// Copilot runs `copilot -p prompt --allow-all-tools --trust-folder --output-format json` in dir
// against m.
func (e *Env) Copilot(m *Model, dir string, prompt string) CopilotSession {
	e.T.Helper()
	return e.copilot(m, dir, prompt, "--trust-folder")
}

// CopilotTrusted runs Copilot as Copilot does, without --trust-folder: the folder is trusted
// only if the user's configuration says so (CopilotTrust).
func (e *Env) CopilotTrusted(m *Model, dir string, prompt string) CopilotSession {
	e.T.Helper()
	return e.copilot(m, dir, prompt)
}

// CopilotTrust trusts folders as answering Copilot's prompt does: trustedFolders in
// ~/.copilot/config.json, which 1.0.102 writes with // comments above it.
func (e *Env) CopilotTrust(folders ...string) {
	e.T.Helper()
	b, _ := json.Marshal(folders)
	e.WriteFile(filepath.Join(e.Home, ".copilot", "config.json"), "// User settings belong in settings.json.\n// This file is managed automatically.\n{\n  \"trustedFolders\": "+string(b)+"\n}\n")
}

func (e *Env) copilot(m *Model, dir string, prompt string, extra ...string) CopilotSession {
	e.T.Helper()
	args := append([]string{"-p", prompt, "--allow-all-tools", "--output-format", "json", "--disable-client-telemetry"}, extra...)
	r := e.Run(dir, 3*time.Minute, CopilotEnv(m), e.Client("copilot"), args...)
	s := CopilotSession{Result: r}
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		s.Events = append(s.Events, ev)
		if ev["type"] == "result" {
			s.SessionID, _ = ev["sessionId"].(string)
		}
	}
	if r.Code != 0 || r.TimedOut {
		e.T.Errorf("copilot -p in %s: exit %d (timed out: %v) after %v\nstderr: %s\nstdout (end): %s", dir, r.Code, r.TimedOut, r.Wall.Round(time.Millisecond), r.Stderr, tail(r.Stdout, 2000))
	}
	return s
}

// CopilotMCPAdd runs `copilot mcp add NAME -- COMMAND...` (the user's configuration).
func (e *Env) CopilotMCPAdd(name string, command ...string) {
	e.T.Helper()
	args := append([]string{"mcp", "add", name, "--"}, command...)
	r := e.Run(e.Home, time.Minute, []string{"COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false"}, e.Client("copilot"), args...)
	if r.Code != 0 {
		e.T.Fatalf("copilot %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
}

// CopilotEvents returns the session's event log as Copilot keeps it
// (~/.copilot/session-state/<session>/events.jsonl): its transcript, with the hooks' inputs.
func (e *Env) CopilotEvents(session string) string {
	return filepath.Join(e.Home, ".copilot", "session-state", session, "events.jsonl")
}
