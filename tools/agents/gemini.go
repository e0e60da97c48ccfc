package agents

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Gemini CLI, as the harness runs it: `gemini -p PROMPT -y -m MODEL -o stream-json` (headless,
// every tool call approved) against the mock model through GOOGLE_GEMINI_BASE_URL, with a dummy
// GEMINI_API_KEY, and nothing else reachable. What 0.61.0 needs for that, measured:
//
//   - The user settings must name the API-key sign-in (security.auth.selectedType
//     "gemini-api-key"): with GOOGLE_GEMINI_BASE_URL set and none named, 0.61.0 picks its
//     "gateway" sign-in, which its own check then rejects ("Invalid auth method selected.",
//     exit 41).
//   - A fixed model (-m): the default, "auto", first asks a router model (gemini-3.5-flash-lite,
//     generateContent with a JSON schema) to score the prompt, and waits on its answer.
//   - privacy.usageStatisticsEnabled false: else it resolves play.googleapis.com (its usage
//     statistics) at start. With it off, strace shows no connection but to 127.0.0.1.
//   - The project's .gemini/settings.json is read only in a trusted folder, and only in the
//     folder Gemini starts in (not a parent): GEMINI_CLI_TRUST_WORKSPACE=true trusts it for a
//     headless run. `--skip-trust` does not do it in 0.61.0: the run goes on with the project
//     settings (hooks, MCP servers) left out (TestGeminiCLIOutsideTheProject).
const (
	GeminiVersion = "0.61.0" // tools/agents/clients/package.json
	GeminiModel   = "gemini-2.5-flash"

	// GeminiServer prefixes the tools of the agent-rewind MCP server: Gemini names MCP tools
	// mcp_<server>_<tool>. GeminiShop prefixes the shop server's.
	GeminiServer = "mcp_agent-rewind_"
	GeminiShop   = "mcp_shop_"
)

// geminiTimeout bounds one headless run (a session of the harness takes 10 to 20 s).
const geminiTimeout = 3 * time.Minute

// GeminiSession is one `gemini -p` run.
type GeminiSession struct {
	Result
	SessionID string           // from the stream's init event
	Events    []map[string]any // every line of the stream-json output
	Response  string           // the assistant's messages, joined: what the user reads
}

// GeminiEnv is what Gemini CLI needs to talk to m and to nothing else.
func GeminiEnv(m *Model) []string {
	return []string{
		"GOOGLE_GEMINI_BASE_URL=" + m.URL,
		"GEMINI_API_KEY=harness-dummy-key",
	}
}

// GeminiUserSettings is the harness's ~/.gemini/settings.json: the API-key sign-in, no usage
// statistics, telemetry or update check.
const GeminiUserSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
}
`

// InstallGemini sets the client up as docs/agents.md tells a user: the user settings above, and
// integrations/gemini-cli/.gemini/settings.json merged into the project's .gemini/settings.json,
// beside the user's own MCP server (the shop) and a hook that records every BeforeTool,
// AfterTool and BeforeAgent input (GeminiPayloads); and the folder trusted for headless runs, by
// GEMINI_CLI_TRUST_WORKSPACE=true in the clients' environment. It returns the file it wrote.
func (e *Env) InstallGemini() string {
	e.T.Helper()
	e.WriteFile(filepath.Join(e.Home, ".gemini", "settings.json"), GeminiUserSettings)
	root, err := RepoRoot()
	if err != nil {
		e.T.Fatal(err)
	}
	shipped := filepath.Join(root, "integrations", "gemini-cli", ".gemini", "settings.json")
	b, err := os.ReadFile(shipped)
	if err != nil {
		e.T.Fatal(err)
	}
	var all map[string]any // kept as it is, but for the two entries merged into
	err = json.Unmarshal(b, &all)
	hooks, ok1 := all["hooks"].(map[string]any)
	servers, ok2 := all["mcpServers"].(map[string]any)
	if err != nil || !ok1 || !ok2 {
		e.T.Fatalf("%s: want an object with hooks and mcpServers objects (what the harness merges): %v", shipped, err)
	}
	servers["shop"] = map[string]any{"command": e.Bin.Shop, "args": []string{"--log", e.Shop}}
	recorder := filepath.Join(e.Root, "record-hook")
	e.WriteFile(recorder, "#!/bin/sh\n# the harness's recorder: keep the hook input, allow the call\ncat > \""+e.payloads()+"/payload.$(date +%s%N)-$$\"\necho '{}'\n")
	if err := os.Chmod(recorder, 0o755); err != nil {
		e.T.Fatal(err)
	}
	if err := os.MkdirAll(e.payloads(), 0o700); err != nil {
		e.T.Fatal(err)
	}
	for _, event := range []string{"BeforeTool", "AfterTool", "BeforeAgent"} {
		entries, _ := hooks[event].([]any)
		hooks[event] = append(entries, map[string]any{"matcher": ".*", "hooks": []any{
			map[string]any{"name": "harness-recorder", "type": "command", "command": recorder}}})
	}
	// Headless, a folder is trusted by the environment (docs/agents.md).
	e.Set("GEMINI_CLI_TRUST_WORKSPACE", "true")
	out, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		e.T.Fatal(err)
	}
	path := filepath.Join(e.Project, ".gemini", "settings.json")
	e.WriteFile(path, string(out)+"\n")
	return path
}

// payloads is the folder the recorder writes to: CapturePayloads's, so that SavePayloads keeps
// them (the recorder sees every call, where a recorder in front of agent-rewind sees only
// what the shipped matcher sends it).
func (e *Env) payloads() string { return filepath.Join(e.Root, "payloads") }

// GeminiPayloads returns every hook input the recorder kept, in the order Gemini sent them.
func (e *Env) GeminiPayloads() []map[string]any {
	e.T.Helper()
	files, err := filepath.Glob(filepath.Join(e.payloads(), "payload.*"))
	if err != nil {
		e.T.Fatal(err)
	}
	sort.Strings(files) // named by the nanosecond they were written
	var out []map[string]any
	for _, f := range files {
		var p map[string]any
		if err := json.Unmarshal([]byte(e.ReadFile(f)), &p); err != nil {
			e.T.Fatalf("hook input %s: %v", f, err)
		}
		out = append(out, p)
	}
	return out
}

// Gemini runs `gemini -p prompt -y -m GeminiModel -o stream-json [args]` in dir against m,
// and fails the test when it does not exit 0.
func (e *Env) Gemini(m *Model, dir, prompt string, args ...string) GeminiSession {
	e.T.Helper()
	args = append([]string{"-p", prompt, "-y", "-m", GeminiModel, "-o", "stream-json"}, args...)
	r := e.Run(dir, geminiTimeout, GeminiEnv(m), e.Client("gemini"), args...)
	if r.Code != 0 || r.TimedOut {
		e.T.Errorf("gemini -p in %s: exit %d (timed out: %v) after %v\nstderr: %s\nstdout (end): %s", dir, r.Code, r.TimedOut, r.Wall.Round(time.Millisecond), r.Stderr, tail(r.Stdout, 2000))
	}
	s := GeminiSession{Result: r}
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	sc.Buffer(nil, 16<<20)
	var said []string
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue // not an event
		}
		s.Events = append(s.Events, ev)
		switch ev["type"] {
		case "init":
			s.SessionID, _ = ev["session_id"].(string)
		case "message":
			if ev["role"] == "assistant" {
				text, _ := ev["content"].(string)
				said = append(said, text)
			}
		}
	}
	s.Response = strings.Join(said, "")
	return s
}

// GeminiTranscripts returns the session files Gemini CLI wrote
// (~/.gemini/tmp/<project>/chats/session-*.jsonl).
func (e *Env) GeminiTranscripts() []string {
	files, _ := filepath.Glob(filepath.Join(e.Home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	return files
}
