package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// checkpointID finds a checkpoint id (12 hex digits) in what the model read.
var checkpointID = regexp.MustCompile(`\b[0-9a-f]{12}\b`)

// readCheckpointID returns the checkpoint id the model read in the result of its last call
// of tool, as a model keeps the id it was told to keep ("" when it read none).
func readCheckpointID(c *mockmodel.Conversation, tool string) string {
	id := ""
	for _, call := range c.Calls() {
		if r, ok := c.Result(call.ID); ok && call.Name == tool {
			id = checkpointID.FindString(r.Text)
		}
	}
	return id
}

// runShell is Gemini CLI's shell tool called with command.
func runShell(command string) mockmodel.Step {
	return mockmodel.Call(map[string]string{"command": command}, "run_shell_command")
}

// TestGeminiCLI plays one session of Gemini CLI in the project with the shipped
// .gemini/settings.json: an MCP checkpoint, a change, a `git push` and an email (the first time
// of each effect), agent-rewind's list, an MCP rewind to the checkpoint, then the push and the
// email again. Each subtest checks one promise against what the client really did.
func TestGeminiCLI(t *testing.T) {
	e := New(t)
	e.InstallGemini()
	email := map[string]any{"to": "ann@example.com", "subject": "shipped", "body": "version 2 is out"}
	m := e.Model(mockmodel.Sequence("done",
		mockmodel.Call(map[string]any{"label": "before the change"}, GeminiServer+"checkpoint"), // 1
		runShell("printf 'version 2\\n' > app.txt && mkdir -p build && printf bin > build/app"),
		runShell("git push origin main"),                      // 3
		mockmodel.Call(email, GeminiShop+"send_email"),        // 4
		mockmodel.Call(map[string]any{}, GeminiServer+"list"), // 5
		callWith(GeminiServer+"rewind", func(c *mockmodel.Conversation) any { // 6
			return map[string]string{"id": readCheckpointID(c, GeminiServer+"checkpoint")}
		}),
		runShell("git push origin main"),               // 7
		mockmodel.Call(email, GeminiShop+"send_email"), // 8
	))
	s := e.Gemini(m, e.Project, "ship version 2 and tell the customer")
	t.Logf("session %s: %d requests in %v", s.SessionID, len(m.Log()), s.Wall)
	t.Logf("payloads kept: %v", e.SavePayloads("gemini-cli"))
	keepGeminiTranscripts(t, e)

	calls := m.Calls()
	if len(calls) != 8 {
		t.Fatalf("the model's calls that came back: %d, want 8 (the session ended with %q)\nstderr: %s", len(calls), s.Response, s.Stderr)
	}
	result := func(t *testing.T, i int) mockmodel.ToolResult { // what the model read of call i
		t.Helper()
		r, ok := m.Result(calls[i-1].ID)
		if !ok {
			t.Fatalf("no result for call %d (%s)", i, calls[i-1].Name)
		}
		return r
	}
	l := e.List(e.Project)
	var mcpCheckpoint, safety string
	for _, c := range l.Checkpoints {
		switch {
		case c.Label == "before the change":
			mcpCheckpoint = c.ID
		case c.Kind == "safety":
			safety = c.ID
		}
	}
	// Nothing changed since the automatic checkpoint before the email: the MCP rewind's safety
	// checkpoint is that one, as its result says.
	if m := regexp.MustCompile(`The state before is checkpoint ([0-9a-f]{12})`).FindStringSubmatch(result(t, 6).Text); safety == "" && m != nil {
		safety = m[1]
	}

	t.Run("mcp-tools-offered", func(t *testing.T) {
		e := e.For(t)
		offered := m.Last()
		for _, tool := range []string{"checkpoint", "rewind", "list", "guard_effect"} {
			if !offered.HasTool(GeminiServer + tool) {
				t.Errorf("agent-rewind's %s is not offered as %s%s: tools %v", tool, GeminiServer, tool, offered.Tools)
			}
		}
		// Gemini CLI 0.61.0 puts MCP server instructions in the first user turn's session
		// context (<loaded_context><project_context>), not in systemInstruction.
		first := offered.Messages[0].Text
		for server, want := range map[string]string{
			"agent-rewind": e.ServerInstructions(e.Project, e.Bin.Rewind, "mcp"),
			"shop":         e.ServerInstructions(e.Project, e.Bin.Shop, "--log", e.Shop),
		} {
			if want == "" || !strings.Contains(first, want) {
				t.Errorf("%s's instructions %q are not in what the model was sent first:\n%s", server, want, first)
			}
			if strings.Contains(offered.System, want) {
				t.Logf("%s's instructions are in the system prompt too", server)
			}
		}
	})

	t.Run("one-store", func(t *testing.T) {
		e := e.For(t)
		st := e.StoreOf(e.Project)
		if !strings.HasPrefix(st.Store, e.State+string(filepath.Separator)) {
			t.Errorf("the project's store %s is not in the state folder %s", st.Store, e.State)
		}
		if mcpCheckpoint == "" {
			t.Errorf("the MCP server's checkpoint is not in the store the CLI finds for the project: %+v", l.Checkpoints)
		}
		effects := e.Effects(e.Project)
		if !slices.ContainsFunc(effects, func(ef Effect) bool { return ef.Rule == "git-push" && strings.HasPrefix(ef.Source, "hook:gemini") }) {
			t.Errorf("the hook's git push is not in the same store's ledger: %+v", effects)
		}
		for _, other := range []string{filepath.Join(e.Home, ".local", "state", "agent-rewind"), filepath.Join(e.Project, ".rewind")} {
			if fileExists(other) {
				t.Errorf("a second store exists: %s", other)
			}
		}
	})

	t.Run("calls-named-by-agent-rewind", func(t *testing.T) {
		e := e.For(t)
		// Gemini CLI's BeforeTool input names the tool, not the model's call: the automatic
		// checkpoints are named by agent-rewind (gemini-cli_ and 16 hex digits).
		var before int
		for _, p := range e.GeminiPayloads() {
			raw, _ := json.Marshal(p)
			for _, c := range calls {
				if strings.Contains(string(raw), c.ID) {
					t.Errorf("a %v input carries the model's call id %s: automatic checkpoints are possible now\n%s", p["hook_event_name"], c.ID, raw)
				}
			}
			if p["hook_event_name"] == "BeforeTool" {
				before++
			}
		}
		if before != len(calls) {
			t.Errorf("%d BeforeTool inputs recorded for %d calls", before, len(calls))
		}
		// The calls that can change files and were let through: the two shell calls and the
		// email (3, 4; 7 and 8 were refused, agent-rewind's own tools checkpoint themselves).
		var tools []string
		for _, c := range l.Calls() {
			tools = append(tools, c.Tool)
			if named, ok := strings.CutPrefix(c.ID, "gemini-cli_"); !ok || len(named) != 16 || c.Session != s.SessionID || c.Agent != "gemini-cli" {
				t.Errorf("call %+v: want a name gemini-cli_<16 hex>, of session %s", c, s.SessionID)
			}
		}
		if want := []string{"run_shell_command", "run_shell_command", "mcp__shop__send_email"}; !slices.Equal(tools, want) {
			t.Errorf("automatic checkpoints before %v, want %v", tools, want)
		}
	})

	t.Run("rewind-mcp", func(t *testing.T) {
		r := result(t, 6)
		if r.IsError || !strings.Contains(string(calls[5].Args), mcpCheckpoint) || mcpCheckpoint == "" {
			t.Fatalf("the MCP rewind (args %s) to the checkpoint %q: %+v", calls[5].Args, mcpCheckpoint, r)
		}
		want, err := m.Trees.Before(calls[1].ID) // the files when the checkpoint was taken
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Trees.Before(calls[6].ID) // the files the MCP rewind left
		if err != nil {
			t.Fatal(err)
		}
		if d := Diff(want, got); len(d) > 0 {
			t.Errorf("the MCP rewind did not restore the checkpoint exactly:\n%s", strings.Join(d, "\n"))
		}
	})

	t.Run("rewind-cli", func(t *testing.T) {
		e := e.For(t)
		if safety == "" {
			t.Fatalf("no safety checkpoint of the MCP rewind in the list: %+v", l.Checkpoints)
		}
		e.Rewind(e.Project, safety)
		want, err := m.Trees.Before(calls[5].ID) // the files before the MCP rewind
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadTree(e.Project)
		if err != nil {
			t.Fatal(err)
		}
		if d := Diff(want, got); len(d) > 0 {
			t.Errorf("agent-rewind rewind %s did not restore the state before the MCP rewind exactly:\n%s", safety, strings.Join(d, "\n"))
		}
	})

	t.Run("repeated-push-refused", func(t *testing.T) {
		e := e.For(t)
		if p := e.Pushes(); len(p) != 1 {
			t.Errorf("the remote received %d pushes, want 1 (the first): %v", len(p), p)
		}
		r := result(t, 7)
		if !strings.Contains(r.Text, "agent-rewind") || !strings.Contains(strings.ToLower(r.Text), "refused") {
			t.Errorf("the model read no refusal from agent-rewind for the repeated push: %q", r.Text)
		}
		t.Logf("the model read, for the repeated push: %q", r.Text)
	})

	t.Run("repeated-mcp-effect-refused", func(t *testing.T) {
		e := e.For(t)
		if n := strings.Count(e.ReadFile(e.Shop), "\n"); n != 1 {
			t.Errorf("the shop sent %d emails, want 1 (the repeat refused)", n)
		}
		r := result(t, 8)
		if !strings.Contains(r.Text, "agent-rewind") || !strings.Contains(strings.ToLower(r.Text), "refused") {
			t.Errorf("the model read no refusal from agent-rewind for the repeated email: %q", r.Text)
		}
		t.Logf("the model read, for the repeated email: %q", r.Text)
	})

	t.Run("what-the-model-reads", func(t *testing.T) {
		// Gemini hands the model the text content of an MCP result, never structuredContent.
		cp, ls := result(t, 1), result(t, 5)
		t.Logf("checkpoint: %q\nlist: %q\nrewind: %q", cp.Text, ls.Text, result(t, 6).Text)
		if mcpCheckpoint == "" || !strings.Contains(cp.Text, mcpCheckpoint) || !strings.Contains(cp.Text, "rewind") {
			t.Errorf("the checkpoint's result does not give the model the id %q and how to rewind: %q", mcpCheckpoint, cp.Text)
		}
		if !strings.Contains(ls.Text, mcpCheckpoint) {
			t.Errorf("list's result does not name the checkpoint %q: %q", mcpCheckpoint, ls.Text)
		}
		if rw := result(t, 6).Text; safety == "" || !strings.Contains(rw, safety) {
			t.Errorf("the rewind's result does not give the model the safety id %q that undoes it: %q", safety, rw)
		}
	})

	t.Run("client-facts", func(t *testing.T) {
		// What the guard knows of Gemini CLI (barrier's facts, one place) against what it did.
		c := barrier.ClientOf(barrier.AgentGemini)
		offered := m.Last()
		for _, name := range []string{c.MCPToolName("agent-rewind", "checkpoint"), c.MCPToolName("shop", "send_email")} {
			if !offered.HasTool(name) {
				t.Errorf("barrier's MCPToolName gives %q, which Gemini did not offer: %v", name, offered.Tools)
			}
		}
		for _, tool := range append(slices.Clone(c.ShellTools), c.FileTools...) {
			if !offered.HasTool(tool) {
				t.Errorf("barrier's facts name the tool %q, which Gemini did not offer: %v", tool, offered.Tools)
			}
		}
		for _, p := range e.GeminiPayloads() {
			event, _ := p["hook_event_name"].(string)
			name, _ := p["tool_name"].(string)
			if c.Role(event) == "" {
				t.Errorf("Gemini sent the event %q, which barrier's facts do not know", event)
			}
			if strings.HasPrefix(name, "mcp_") && !slices.Contains([]string{c.MCPToolName("agent-rewind", strings.TrimPrefix(name, GeminiServer)), c.MCPToolName("shop", strings.TrimPrefix(name, GeminiShop))}, name) {
				t.Errorf("the hook input names the MCP tool %q otherwise than barrier's MCPToolName", name)
			}
		}
		if c.CallID != "" {
			t.Errorf("barrier's facts say the hook input carries the call id in %q; none of Gemini's did", c.CallID)
		}
	})

	t.Run("chain", func(t *testing.T) { e.For(t).VerifyChain(e.Project) })

	t.Run("only-the-model-called", func(t *testing.T) {
		if refused := m.Refused(); len(refused) > 0 {
			t.Errorf("Gemini CLI called something the mock does not serve:\n%s", strings.Join(refused, "\n"))
		}
		for _, ex := range m.Answered() {
			if want := "/v1beta/models/" + GeminiModel + ":streamGenerateContent"; ex.Conversation.Path != want {
				t.Errorf("a request to %s, want only %s", ex.Conversation.Path, want)
			}
		}
	})
}

// TestGeminiCLIGuardCannotRun plays calls the shipped BeforeTool hook sees when the guard
// cannot run. Without the binary on PATH (the settings installed before the binary), the
// promise is Claude Code's: the calls run and the user is told, on every call, that the guard
// is not running. A guard that crashes (exit 3) blocks the call: Gemini denies a call for any
// exit code but 0 and 1, with the hook's output as the reason the model reads; the prompt hook
// (BeforeAgent), where Gemini would block the whole turn, exits 0 whatever the guard did.
func TestGeminiCLIGuardCannotRun(t *testing.T) {
	t.Run("binary_missing", func(t *testing.T) {
		e := New(t)
		e.InstallGemini()
		e.SetPath(false)
		m := e.Model(mockmodel.Sequence("done",
			runShell("printf x > unguarded.txt"),
			mockmodel.Call(map[string]any{"to": "ann@example.com", "subject": "hello", "body": "hi"}, GeminiShop+"send_email"),
		))
		s := e.Gemini(m, e.Project, "write the file and tell the customer")
		calls := m.Calls()
		if len(calls) != 2 {
			t.Fatalf("the model's calls that came back: %d, want 2 (the session ended with %q)", len(calls), s.Response)
		}
		for _, c := range calls {
			r, _ := m.Result(c.ID)
			t.Logf("the model read, for %s: %q", c.Name, r.Text)
			if r.IsError {
				t.Errorf("%s %s was not run without the binary: the model read %q", c.Name, c.Args, r.Text)
			}
		}
		if e.ReadFile(filepath.Join(e.Project, "unguarded.txt")) != "x" || e.ReadFile(e.Shop) == "" {
			t.Errorf("the calls did not run: the file %q, the shop's log %q", e.ReadFile(filepath.Join(e.Project, "unguarded.txt")), e.ReadFile(e.Shop))
		}
		if n := strings.Count(s.Stderr, "the effect guard is NOT running"); n != len(calls) {
			t.Errorf("the user was told %d times that the guard is not running, want once per call (%d); stderr:\n%s", n, len(calls), s.Stderr)
		}
		if shown := strings.Contains(s.Stderr, "Hook system message: "); shown != barrier.ClientOf(barrier.AgentGemini).SystemMessage {
			t.Errorf("Gemini showed a hook's systemMessage: %v; barrier's facts say %v", shown, !shown)
		}
		if slices.ContainsFunc(m.Last().Tools, func(n string) bool { return strings.HasPrefix(n, GeminiServer) }) {
			t.Errorf("agent-rewind's tools are offered without the binary: %v", m.Last().Tools)
		}
	})
	t.Run("guard_crashes", func(t *testing.T) {
		e := New(t)
		e.InstallGemini()
		crash := filepath.Join(e.Root, "crash-bin")
		for _, name := range []string{"agent-rewind", "agent-rewind-hook"} {
			e.WriteFile(filepath.Join(crash, name), "#!/bin/sh\ncase \"$*\" in *guard*) echo 'guard crashed' >&2; exit 3;; esac\nexec "+filepath.Join(e.Bin.Dir, name)+" \"$@\"\n")
			if err := os.Chmod(filepath.Join(crash, name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		e.Set("PATH", crash+string(os.PathListSeparator)+e.Get("PATH"))
		m := e.Model(mockmodel.Sequence("done", runShell("printf x > blocked.txt")))
		e.Gemini(m, e.Project, "write")
		calls := m.Calls()
		if len(calls) != 1 {
			t.Fatalf("the model's calls that came back: %d, want 1", len(calls))
		}
		r, _ := m.Result(calls[0].ID)
		t.Logf("the model read: %q", r.Text)
		if fileExists(filepath.Join(e.Project, "blocked.txt")) || !r.IsError || !strings.Contains(r.Text, "guard crashed") {
			t.Errorf("a BeforeTool hook that exits 3 did not block the call with its output as the reason: the model read %q", r.Text)
		}
	})
}

// TestGeminiCLIOutsideTheProject records where Gemini CLI 0.61.0 does not read the project's
// .gemini/settings.json at all, so that nothing of agent-rewind runs: started in a subfolder of
// the project, and trusted by --skip-trust instead of GEMINI_CLI_TRUST_WORKSPACE. These are the
// client's facts, which the Gemini section of docs/agents.md must state; the test fails when a
// version changes them.
func TestGeminiCLIOutsideTheProject(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dir       func(*Env) string
		skipTrust bool // trusted by --skip-trust instead of GEMINI_CLI_TRUST_WORKSPACE
	}{
		{"subfolder", func(e *Env) string { return e.Sub }, false},
		{"skip-trust", func(e *Env) string { return e.Project }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(t)
			e.InstallGemini()
			m := e.Model(mockmodel.Sequence("done",
				runShell("git push origin main"),
			))
			if tc.skipTrust {
				e.Set("GEMINI_CLI_TRUST_WORKSPACE", "")
				e.Gemini(m, tc.dir(e), "push", "--skip-trust")
			} else {
				e.Gemini(m, tc.dir(e), "push")
			}
			tools := m.Last().Tools
			hooked := len(e.GeminiPayloads())
			pushes := len(e.Pushes())
			t.Logf("Gemini CLI %s, %s: agent-rewind's tools offered: %v; hook inputs: %d; pushes that ran: %d", GeminiVersion, tc.name,
				slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, GeminiServer) }), hooked, pushes)
			if slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "mcp_") }) || hooked > 0 || pushes != 1 {
				t.Errorf("Gemini CLI read the project's settings here (tools %v, %d hook inputs, %d pushes): docs/agents.md says it does not (update it)", tools, hooked, pushes)
			}
		})
	}
}

// keepGeminiTranscripts copies the session files Gemini CLI wrote to
// REWIND_AGENTS_TRANSCRIPTS/gemini-cli-VERSION/ (testdata/transcripts), when it is set.
func keepGeminiTranscripts(t *testing.T, e *Env) {
	out := os.Getenv("REWIND_AGENTS_TRANSCRIPTS")
	if out == "" {
		return
	}
	files := e.GeminiTranscripts()
	if len(files) == 0 {
		t.Errorf("no session file under %s", filepath.Join(e.Home, ".gemini", "tmp"))
	}
	for _, f := range files {
		e.WriteFile(filepath.Join(out, "gemini-cli-"+GeminiVersion, filepath.Base(f)), e.ReadFile(f))
	}
}

// TestGeminiCLIAfterSetup sets Gemini CLI up with agent-rewind setup gemini (run from the
// subfolder; the user's settings and the folder's trust as a user has them): doctor finds
// nothing wrong, and a session in the project is guarded: the MCP server and the hook write to
// one store, and a repeated push is refused with the reason in what the model reads. A matcher
// edited away from MCP tools is what doctor then reports, fixed by the command it names. Then
// setup --user guards a session started in the subfolder.
func TestGeminiCLIAfterSetup(t *testing.T) {
	e := New(t)
	e.WriteFile(filepath.Join(e.Home, ".gemini", "settings.json"), GeminiUserSettings)
	e.Set("GEMINI_CLI_TRUST_WORKSPACE", "true")
	s := e.Setup(e.Sub, "", "gemini")
	if s.Workspace != e.Project || len(s.Files) != 1 {
		t.Fatalf("setup gemini: %+v", s)
	}
	if d := e.Doctor(e.Project); len(d.Of("gemini")) > 0 {
		t.Fatalf("doctor after setup: %+v", d.Of("gemini"))
	}
	m := e.Model(mockmodel.Sequence("done",
		mockmodel.Call(map[string]any{"label": "by setup's server"}, GeminiServer+"checkpoint"),
		runShell("git push origin main"),
		runShell("git push origin main"),
	))
	e.Gemini(m, e.Project, "push the release")
	calls := m.Calls()
	if len(calls) != 3 {
		t.Fatalf("the model's calls that came back: %d, want 3", len(calls))
	}
	l := e.List(e.Project)
	if !slices.Contains(l.Labels("normal"), "by setup's server") {
		t.Errorf("setup's MCP server did not checkpoint the project's store: %q", l.Labels("normal"))
	}
	effects := e.Effects(e.Project)
	if !slices.ContainsFunc(effects, func(ef Effect) bool { return ef.Rule == "git-push" && strings.HasPrefix(ef.Source, "hook:gemini") }) {
		t.Errorf("the hook's push is not in the project's ledger: %+v", effects)
	}
	if r, _ := m.Result(calls[2].ID); !r.IsError || !strings.Contains(r.Text, "agent-rewind refused effect") || len(e.Pushes()) != 1 {
		t.Errorf("the repeated push: the model read %q; pushes %v", r.Text, e.Pushes())
	}

	settings := filepath.Join(e.Project, ".gemini", "settings.json")
	e.WriteFile(settings, strings.Replace(e.ReadFile(settings), `"run_shell_command|write_file|replace|mcp_.*"`, `"run_shell_command|write_file|replace"`, 1))
	d := e.Doctor(e.Project)
	if d.Code != 1 || !d.Has("lets mcp_slack_slack_post_message by unguarded", "agent-rewind setup gemini") {
		t.Errorf("doctor with the matcher edited away from MCP tools: exit %d, problems %+v", d.Code, d.Problems)
	}
	e.Setup(e.Project, "", "gemini")
	if d := e.Doctor(e.Project); len(d.Of("gemini")) > 0 {
		t.Errorf("doctor after the fix it named: %+v", d.Of("gemini"))
	}

	// Started in a subfolder Gemini reads no project settings (TestGeminiCLIOutsideTheProject):
	// setup --user, as setup's note says, guards it there too.
	e.Setup(e.Sub, "", "gemini", "--user")
	sub := e.Model(mockmodel.Sequence("done", runShell("REWIND_EFFECT_KEY=release-from-sub git push origin main"), runShell("REWIND_EFFECT_KEY=release-from-sub git push origin main")))
	e.Gemini(sub, e.Sub, "push from the subfolder")
	if calls := sub.Calls(); len(calls) != 2 {
		t.Fatalf("from the subfolder, the model's calls that came back: %d, want 2", len(calls))
	} else if r, _ := sub.Result(calls[1].ID); !strings.Contains(r.Text, "agent-rewind refused effect") {
		t.Errorf("from the subfolder after setup --user, the repeated push: the model read %q", r.Text)
	}
}
