package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Cline CLI, as the harness runs it: `cline --json PROMPT` (headless, tools auto-approved)
// against the mock's Chat Completions through the openai-compatible provider that
// `cline auth -p openai-compatible -b URL` configures (a dummy key, no sign-in), every proxy
// variable at the mock, the shipped hook in the project's .clinerules/hooks/ and the shipped
// MCP entry in ~/.cline/data/settings/cline_mcp_settings.json with the project's path, as
// docs/agents.md says.
//
// Cline runs its sessions in a background hub daemon when one is up (`cline hub status`), and
// a hub keeps the environment of the session that started it for the hooks and MCP servers of
// every later session: each session here is preceded and followed by `cline hub stop` when a
// hub runs (Run also kills what a session leaves in its process group).
const (
	ClineVersion = "3.0.65" // tools/agents/clients/package.json
	ClineModel   = "mock-model"
)

// ClineSession is one `cline --json` run.
type ClineSession struct {
	Result
	Events []map[string]any // every line of the --json output
}

// ClineHome is Cline's configuration folder.
func (e *Env) ClineHome() string { return filepath.Join(e.Home, ".cline") }

// ClineConfigure points Cline at m (ClineProvider; writing the settings costs no start of the
// Cline binary, about 2 s of CPU each), and writes the MCP settings: the shipped agent-rewind
// entry with the project's path in it, and the shop.
func (e *Env) ClineConfigure(m *Model) {
	e.T.Helper()
	e.ClineProvider(m)
	root, err := RepoRoot()
	if err != nil {
		e.T.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "integrations", "cline", "cline_mcp_settings.json"))
	if err != nil {
		e.T.Fatal(err)
	}
	const placeholder = "/absolute/path/to/your/project"
	if !strings.Contains(string(b), placeholder) {
		e.T.Fatalf("integrations/cline/cline_mcp_settings.json no longer holds %s: update the harness to install it as docs/agents.md now says", placeholder)
	}
	var settings struct {
		MCPServers map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(b), placeholder, e.Project)), &settings); err != nil {
		e.T.Fatalf("integrations/cline/cline_mcp_settings.json: %v", err)
	}
	settings.MCPServers["shop"] = map[string]any{"command": e.Bin.Shop, "args": []string{"--log", e.Shop}, "disabled": false}
	out, _ := json.MarshalIndent(settings, "", "  ")
	e.WriteFile(filepath.Join(e.ClineHome(), "data", "settings", "cline_mcp_settings.json"), string(out))
}

// ClineProvider points Cline at m: the provider settings as `cline auth -p openai-compatible -k
// KEY -b URL -m MODEL` writes them.
func (e *Env) ClineProvider(m *Model) {
	e.T.Helper()
	providers := map[string]any{"version": 1, "lastUsedProvider": "openai-compatible", "modes": map[string]any{},
		"providers": map[string]any{"openai-compatible": map[string]any{
			"settings":  map[string]any{"provider": "openai-compatible", "apiKey": "sk-harness-dummy", "model": ClineModel, "baseUrl": m.URL + "/v1"},
			"updatedAt": time.Now().UTC().Format(time.RFC3339), "tokenSource": "manual",
		}}}
	pb, _ := json.MarshalIndent(providers, "", "  ")
	e.WriteFile(filepath.Join(e.ClineHome(), "data", "settings", "providers.json"), string(pb))
}

// InstallCline copies the shipped hook into the project's .clinerules/hooks/, executable.
func (e *Env) InstallCline() {
	e.T.Helper()
	root, err := RepoRoot()
	if err != nil {
		e.T.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "integrations", "cline", ".clinerules", "hooks", "PreToolUse"))
	if err != nil {
		e.T.Fatal(err)
	}
	dst := filepath.Join(e.Project, ".clinerules", "hooks", "PreToolUse")
	e.WriteFile(dst, string(b))
	if err := os.Chmod(dst, 0o755); err != nil {
		e.T.Fatal(err)
	}
}

// ClineHub returns the pid of the hub daemon running for this home (0 when none): its
// discovery record, ~/.cline/data/locks/hub/production.json, names a live process.
func (e *Env) ClineHub() int {
	var rec struct {
		PID int `json:"pid"`
	}
	b, err := os.ReadFile(filepath.Join(e.ClineHome(), "data", "locks", "hub", "production.json"))
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.PID <= 0 {
		return 0
	}
	if syscall.Kill(rec.PID, 0) != nil {
		return 0 // a record left by a hub that is gone
	}
	return rec.PID
}

// ClineHubStop stops the hub daemon of this home with `cline hub stop` when one runs, and
// fails the test when it is still there.
func (e *Env) ClineHubStop() {
	e.T.Helper()
	pid := e.ClineHub()
	if pid == 0 {
		return
	}
	r := e.Run(e.Project, time.Minute, nil, e.Client("cline"), "hub", "stop")
	if r.Code != 0 || e.ClineHub() != 0 {
		e.T.Errorf("cline hub stop: exit %d, and hub %d still runs\n%s%s", r.Code, pid, r.Stdout, r.Stderr)
	}
}

// Cline runs `cline --json -c dir prompt` against m, with no hub before or after it.
func (e *Env) Cline(m *Model, dir, prompt string) ClineSession {
	e.T.Helper()
	e.ClineHubStop()
	defer e.ClineHubStop()
	r := e.Run(dir, 3*time.Minute, m.ProxyEnv(), e.Client("cline"), "--json", "-c", dir, prompt)
	s := ClineSession{Result: r}
	for _, line := range strings.Split(r.Stdout, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil {
			s.Events = append(s.Events, ev)
		}
	}
	if r.TimedOut {
		e.T.Errorf("cline in %s timed out after %v\nstderr: %s\nstdout (end): %s", dir, r.Wall.Round(time.Millisecond), tail(r.Stderr, 3000), tail(r.Stdout, 2000))
	}
	return s
}

// ClineLog returns Cline's own log (~/.cline/data/logs/cline.log), where it writes what a
// hook answered.
func (e *Env) ClineLog() string {
	return e.ReadFile(filepath.Join(e.ClineHome(), "data", "logs", "cline.log"))
}
