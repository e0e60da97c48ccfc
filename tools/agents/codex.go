package agents

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// Codex CLI, as the harness runs it: `codex exec --json` (headless) against the mock model
// through a model provider in ~/.codex/config.toml (wire_api "responses", a dummy key in the
// variable the provider names), the project trusted in the same file, every proxy variable
// pointed at the mock so that a call to anywhere else shows in its log, and the project's
// .codex/ copied from integrations/codex as docs/agents.md says.
const (
	CodexVersion = "0.169.0" // tools/agents/clients/package.json

	// CodexModel is the model the provider is asked for. Codex takes the tools it offers from
	// its model catalog (`codex debug models`): every 0.169.0 model but gpt-5.5 is
	// "code_mode_only" (the model gets one custom tool, exec, and writes JavaScript that calls
	// the others), gpt-5.5 gets exec_command, apply_patch and tool_search as function tools,
	// the tools the hooks are written for.
	CodexModel = "gpt-5.5"

	// CodexServer is the namespace of agent-rewind's MCP tools (from the server's name
	// agent-rewind in config.toml): the model calls mcp__agent_rewind__checkpoint, and the
	// hooks see that name.
	CodexServer = "mcp__agent_rewind__"
	CodexShop   = "mcp__shop__"

	codexKeyVar = "MOCK_MODEL_API_KEY"
)

// CodexSession is one `codex exec --json` run.
type CodexSession struct {
	Result
	ThreadID string           // thread.started's thread_id: the session id the hooks get
	Events   []map[string]any // every line of the --json output
	Rollout  string           // the rollout file Codex wrote for the thread ("" when none)
}

// CodexHome is the folder Codex reads its configuration from and keeps its sessions in.
func (e *Env) CodexHome() string { return filepath.Join(e.Home, ".codex") }

// CodexConfigure writes ~/.codex/config.toml: the mock as the model provider, the project
// trusted (what answering Codex's trust prompt writes), no update check or analytics, and the
// shop server.
func (e *Env) CodexConfigure(m *Model) {
	e.T.Helper()
	e.CodexConfigureAt(m, m.URL+"/v1")
}

// CodexConfigureAt is CodexConfigure with the provider's base_url at baseURL (a gateway in
// front of m, say) instead of m itself.
func (e *Env) CodexConfigureAt(m *Model, baseURL string) {
	e.T.Helper()
	cfg := fmt.Sprintf(`model = %q
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = %q
wire_api = "responses"
env_key = %q

[analytics]
enabled = false

[projects.%q]
trust_level = "trusted"

[mcp_servers.shop]
command = %q
args = ["--log", %q]
`, CodexModel, baseURL, codexKeyVar, e.Project, e.Bin.Shop, e.Shop)
	e.WriteFile(filepath.Join(e.CodexHome(), "config.toml"), cfg)
}

// InstallCodex copies integrations/codex/.codex into the project as docs/agents.md tells a
// user: as shipped (Codex starts the server in its working directory, which stands for the
// project).
func (e *Env) InstallCodex() {
	e.T.Helper()
	root, err := RepoRoot()
	if err != nil {
		e.T.Fatal(err)
	}
	src := filepath.Join(root, "integrations", "codex", ".codex")
	for _, name := range []string{"hooks.json", "config.toml"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			e.T.Fatal(err)
		}
		e.WriteFile(filepath.Join(e.Project, ".codex", name), string(b))
	}
}

// CodexEnv is what Codex needs to talk to m and to nothing else: the provider's key, and the
// proxies at the mock.
func CodexEnv(m *Model) []string {
	return append([]string{codexKeyVar + "=sk-harness-dummy"}, m.ProxyEnv()...)
}

// CodexOptions are how a session is run.
type CodexOptions struct {
	BypassHookTrust bool // --dangerously-bypass-hook-trust instead of trusted hooks
	Human           bool // the human-readable output (on stderr) instead of --json's events
}

// Codex runs `codex exec` with prompt in dir against m: no approvals and no sandbox (the
// harness's world is a temporary folder), --strict-config (so a configuration key this
// version does not know fails the run), and --json unless o.Human.
func (e *Env) Codex(m *Model, dir string, o CodexOptions, prompt string) CodexSession {
	e.T.Helper()
	args := []string{"exec", "--strict-config", "--dangerously-bypass-approvals-and-sandbox", "-C", dir}
	if !o.Human {
		args = append(args, "--json")
	}
	if o.BypassHookTrust {
		args = append(args, "--dangerously-bypass-hook-trust")
	}
	r := e.Run(dir, 3*time.Minute, CodexEnv(m), e.Client("codex"), append(args, prompt)...)
	s := CodexSession{Result: r}
	for _, line := range strings.Split(r.Stdout, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		s.Events = append(s.Events, ev)
		if ev["type"] == "thread.started" {
			s.ThreadID, _ = ev["thread_id"].(string)
		}
	}
	if _, after, ok := strings.Cut(r.Stderr, "\nsession id: "); ok && s.ThreadID == "" {
		s.ThreadID, _, _ = strings.Cut(after, "\n") // the human output's header names it
	}
	if s.ThreadID != "" {
		files, _ := filepath.Glob(filepath.Join(e.CodexHome(), "sessions", "*", "*", "*", "rollout-*-"+s.ThreadID+".jsonl"))
		if len(files) == 1 {
			s.Rollout = files[0]
		}
	}
	if r.Code != 0 || r.TimedOut {
		e.T.Errorf("codex exec in %s: exit %d (timed out: %v) after %v\nstderr: %s\nstdout (end): %s", dir, r.Code, r.TimedOut, r.Wall.Round(time.Millisecond), tail(r.Stderr, 3000), tail(r.Stdout, 2000))
	}
	return s
}

// CodexHook is one hook as `codex app-server`'s hooks/list reports it.
type CodexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	Matcher     string `json:"matcher"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"` // "untrusted", "trusted", ...
}

// CodexHooks asks `codex app-server` (JSON-RPC over stdio: initialize, then hooks/list) which
// hooks Codex finds for dir, and whether each is trusted.
func (e *Env) CodexHooks(dir string) []CodexHook {
	e.T.Helper()
	cmd := exec.Command(e.Client("codex"), "app-server")
	cmd.Dir, cmd.Env = dir, e.Environ()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		e.T.Fatalf("codex app-server: %v", err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	dec := json.NewDecoder(bufio.NewReader(out))
	call := func(id int, method string, params any) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := in.Write(append(b, '\n')); err != nil {
			e.T.Fatalf("codex app-server %s: %v; stderr: %s", method, err, errb.String())
		}
		for {
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := dec.Decode(&msg); err != nil {
				e.T.Fatalf("codex app-server %s: no answer (%v); stderr: %s", method, err, tail(errb.String(), 2000))
			}
			if msg.ID != nil && *msg.ID == id {
				if msg.Error != nil {
					e.T.Fatalf("codex app-server %s: %s", method, msg.Error)
				}
				return msg.Result
			}
		}
	}
	call(1, "initialize", map[string]any{"clientInfo": map[string]string{"name": "agent-rewind-harness", "version": "1"}})
	b, _ := json.Marshal(map[string]string{"jsonrpc": "2.0", "method": "initialized"})
	io.WriteString(in, string(b)+"\n")
	var list struct {
		Data []struct {
			Hooks  []CodexHook       `json:"hooks"`
			Errors []json.RawMessage `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(call(2, "hooks/list", map[string]any{"cwds": []string{dir}}), &list); err != nil {
		e.T.Fatalf("codex app-server hooks/list: %v", err)
	}
	var hooks []CodexHook
	for _, d := range list.Data {
		if len(d.Errors) > 0 {
			e.T.Errorf("codex app-server hooks/list reports errors: %s", d.Errors)
		}
		hooks = append(hooks, d.Hooks...)
	}
	return hooks
}

// CodexTrustHooks trusts the given hooks without the TUI: a [hooks.state."KEY"] trusted_hash
// entry per hook in ~/.codex/config.toml, with the hash hooks/list reports (what /hooks
// writes when a person trusts them).
func (e *Env) CodexTrustHooks(hooks []CodexHook) {
	e.T.Helper()
	path := filepath.Join(e.CodexHome(), "config.toml")
	cfg := e.ReadFile(path)
	for _, h := range hooks {
		cfg += fmt.Sprintf("\n[hooks.state.%q]\ntrusted_hash = %q\n", h.Key, h.CurrentHash)
	}
	e.WriteFile(path, cfg)
}

// CodexSearch is the step that asks Codex's tool_search for deferred tools: Codex 0.169.0
// offers MCP tools only through it, and the tools it finds are offered from the next request.
func CodexSearch(query string) mockmodel.Step {
	return mockmodel.Call(map[string]any{"query": query, "limit": 20}, "tool_search")
}

// CodexShell is the step that runs cmd with Codex's shell tool.
func CodexShell(cmd string) mockmodel.Step {
	return mockmodel.Call(map[string]any{"cmd": cmd}, "exec_command")
}

// CodexRewindTo is the step that calls agent-rewind's MCP rewind with the id of the model's
// earlier shell call of cmd (its automatic checkpoint's key).
func CodexRewindTo(cmd string) mockmodel.Step {
	return func(c *mockmodel.Conversation) (mockmodel.ToolCall, bool) {
		name := CodexServer + "rewind"
		if !c.HasTool(name) {
			return mockmodel.ToolCall{}, false
		}
		id := ""
		for _, call := range c.Calls() {
			var args struct{ Cmd string }
			if call.Name == "exec_command" && json.Unmarshal(call.Args, &args) == nil && args.Cmd == cmd {
				id = call.ID
			}
		}
		if id == "" {
			return mockmodel.ToolCall{}, false
		}
		b, _ := json.Marshal(map[string]string{"id": id})
		return mockmodel.ToolCall{Name: name, Args: b}, true
	}
}
