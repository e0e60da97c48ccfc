package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// toolSearch is Claude Code's step that loads deferred tools by name (its MCP tools are
// deferred: only their names are in a system turn until ToolSearch returns them).
func toolSearch(names ...string) mockmodel.Step {
	return mockmodel.Call(map[string]any{"query": "select:" + strings.Join(names, ","), "max_results": len(names)}, "ToolSearch")
}

// callWith is a step that calls the tool name with arguments made from the request (an id
// an earlier call returned or was made under).
func callWith(name string, args func(c *mockmodel.Conversation) any) mockmodel.Step {
	return func(c *mockmodel.Conversation) (mockmodel.ToolCall, bool) {
		if !c.HasTool(name) {
			return mockmodel.ToolCall{}, false
		}
		b, err := json.Marshal(args(c))
		if err != nil {
			panic(err) // the test's own arguments
		}
		return mockmodel.ToolCall{Name: name, Args: b}, true
	}
}

// nthCall returns the id of the n-th call (from 1) of the tool name in the history.
func nthCall(c *mockmodel.Conversation, name string, n int) string {
	for _, call := range c.Calls() {
		if call.Name == name {
			if n--; n == 0 {
				return call.ID
			}
		}
	}
	return ""
}

func bash(command string) mockmodel.Step {
	return mockmodel.Call(map[string]string{"command": command, "description": command}, "Bash")
}

// TestClaudeCodePlugin plays one session of Claude Code 2.1.328 with the plugin loaded as the
// README's quick start does (--plugin-dir), started at the project's root, and the shop server
// added with `claude mcp add --scope user`: the MCP tools found through ToolSearch, an MCP
// checkpoint, changes by Bash and Write, a real push and email, the MCP list, an MCP rewind to
// before the Write, the same push and email again (both must be refused, with the reason in
// what the model reads), a command that fails, then a CLI rewind to before the first Bash.
// One session serves every check, each a subtest: a session costs seconds.
func TestClaudeCodePlugin(t *testing.T) {
	e := New(t)
	e.CapturePayloads()
	traced := e.TraceNetwork()
	e.ClaudeMCPAdd(e.Project, "user", "shop", e.Bin.Shop, "--log", e.Shop)
	const p = ClaudePluginServer
	email := map[string]string{"to": "ann@example.com", "subject": "Your refund", "body": "It is on its way."}
	newFile := filepath.Join(e.Project, "CHANGES.md")
	m := e.Model(mockmodel.Sequence("done",
		toolSearch(p+"checkpoint", p+"list", p+"rewind", ClaudeShop+"send_email"),
		mockmodel.Call(map[string]string{"label": "before the edits"}, p+"checkpoint"),
		bash("printf 'version 2\\n' > app.txt"),
		mockmodel.Call(map[string]string{"file_path": newFile, "content": "# changes\n\nversion 2\n"}, "Write"),
		bash("git add -A && git commit -qm 'version 2'"),
		bash("git push origin main"),
		mockmodel.Call(email, ClaudeShop+"send_email"),
		mockmodel.Call(map[string]any{}, p+"list"),
		callWith(p+"rewind", func(c *mockmodel.Conversation) any { return map[string]string{"id": nthCall(c, "Write", 1)} }),
		bash("git push origin main"),
		mockmodel.Call(email, ClaudeShop+"send_email"),
		bash("cat no-such-file"), // fails: PostToolUseFailure
	))
	s := e.Claude(m, e.Project, true, "release version 2 and tell Ann")
	if refused := m.Refused(); len(refused) > 0 {
		t.Errorf("Claude Code called something the mock does not serve:\n%s", strings.Join(refused, "\n"))
	}
	saved := e.SavePayloads("claude-code")
	t.Logf("session %s: %v, %d requests; payloads kept: %v", s.SessionID, s.Wall, len(m.Log()), saved)
	if src, ok := e.ClaudeTranscripts()[s.SessionID]; ok {
		e.KeepTranscript("claude-code-"+ClaudeVersion, src)
	} else {
		t.Errorf("no transcript of session %s under %s", s.SessionID, e.Home)
	}

	calls := m.Calls()
	if len(calls) != 12 {
		t.Fatalf("the model made %d calls, want the script's 12: %+v\nlast answer: %q", len(calls), calls, m.Last().LastUserText())
	}
	id := func(i int) string { return calls[i-1].ID } // the i-th step's call
	result := func(i int) mockmodel.ToolResult {
		r, ok := m.Result(id(i))
		if !ok {
			t.Fatalf("no result of step %d (%s) reached the model", i, calls[i-1].Name)
		}
		return r
	}
	l := e.List(e.Project)

	t.Run("no_network", func(t *testing.T) {
		outside, n := e.Connections()
		if traced && n == 0 {
			t.Errorf("strace traced no connect(2) at all: the trace did not work")
		}
		if len(outside) > 0 {
			t.Errorf("Claude Code connected to more than 127.0.0.1 (%d of %d connects):\n%s", len(outside), n, strings.Join(outside, "\n"))
		}
		t.Logf("%d connects traced, all to 127.0.0.1 or unix sockets", n)
	})

	t.Run("tools_offered", func(t *testing.T) {
		e := e.For(t)
		// Deferred: the names are in a system turn, the tools in the request once ToolSearch
		// loaded them.
		first := m.Answered()[0].Conversation
		for _, tool := range []string{"checkpoint", "list", "rewind", "guard_effect", "backtrack_candidates"} {
			if !strings.Contains(first.System, p+tool) {
				t.Errorf("the first request names no %s among the deferred tools", p+tool)
			}
		}
		found := result(1).Text
		t.Logf("ToolSearch returned: %q", found)
		for _, tool := range []string{p + "checkpoint", p + "list", p + "rewind", ClaudeShop + "send_email"} {
			if !strings.Contains(found, "tool_reference: "+tool) || !m.Last().HasTool(tool) {
				t.Errorf("ToolSearch did not load %s (result %q; offered then: %v)", tool, found, m.Last().Tools)
			}
		}
		instr := e.ServerInstructions(e.Project, e.Bin.Rewind, "mcp")
		if instr == "" || !slices.ContainsFunc(m.Systems(), func(s string) bool { return strings.Contains(s, instr) }) {
			t.Errorf("agent-rewind's server instructions (%d chars) are in no system prompt Claude Code sent", len(instr))
		}
	})

	t.Run("one_store", func(t *testing.T) {
		if got := l.Labels("normal"); !slices.Contains(got, "before the edits") {
			t.Errorf("the MCP checkpoint is not in the project's store (asked-for checkpoints there: %q)", got)
		}
		if len(l.Labels("auto")) == 0 {
			t.Error("the hooks' automatic checkpoints are not in the project's store")
		}
	})

	t.Run("call_ids", func(t *testing.T) {
		for _, i := range []int{3, 4, 5, 6, 7} {
			c, ok := l.Call(id(i))
			if !ok {
				t.Errorf("step %d's call %s (%s) has no automatic checkpoint: list has %v", i, id(i), calls[i-1].Name, l.Calls())
				continue
			}
			if c.Agent != "claude-code" || c.Session == "" {
				t.Errorf("call %s: agent %q, session %q", c.ID, c.Agent, c.Session)
			}
			if c.Session != s.SessionID {
				t.Logf("call %s is under hook session %s, the stream's session is %s", c.ID, c.Session, s.SessionID)
			}
		}
		for _, i := range []int{2, 8, 9} { // agent-rewind's own tools
			if c, ok := l.Call(id(i)); ok {
				t.Errorf("agent-rewind's own %s got an automatic checkpoint: %+v", calls[i-1].Name, c)
			}
		}
		for _, c := range l.Calls() {
			if !slices.ContainsFunc(calls, func(mc mockmodel.ToolCall) bool { return mc.ID == c.ID }) {
				t.Errorf("list has a call %s (%s) the model never made", c.ID, c.Tool)
			}
		}
	})

	t.Run("rewind_by_mcp", func(t *testing.T) {
		if r := result(9); r.IsError {
			t.Fatalf("the MCP rewind to before the Write failed: %q", r.Text)
		}
		want, err := m.Trees.Before(id(4))
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Trees.After(id(9))
		if err != nil {
			t.Fatal(err)
		}
		if d := Diff(want, got); len(d) > 0 {
			t.Errorf("after the MCP rewind to before the Write, the files differ from before it:\n%s", strings.Join(d, "\n"))
		}
	})

	t.Run("repeated_push_refused", func(t *testing.T) {
		e := e.For(t)
		first, again := result(6), result(10)
		if first.IsError {
			t.Errorf("the first push was not run: %q", first.Text)
		}
		if n := len(e.Pushes()); n != 1 {
			t.Errorf("the remote received %d pushes, want 1: %v", n, e.Pushes())
		}
		if !again.IsError || !strings.Contains(again.Text, "agent-rewind refused effect") || !strings.Contains(again.Text, "already fired") {
			t.Errorf("the repeated push after the rewind: the model read %q, want the guard's refusal and its reason", again.Text)
		}
		checkSpent(t, e, "git push", id(6))
	})

	t.Run("repeated_mcp_effect_refused", func(t *testing.T) {
		e := e.For(t)
		if r := result(7); r.IsError || !strings.Contains(r.Text, "email 1 sent") {
			t.Errorf("the first email: the model read %q", r.Text)
		}
		again := result(11)
		if !again.IsError || !strings.Contains(again.Text, "agent-rewind refused effect") {
			t.Errorf("the repeated email: the model read %q, want the guard's refusal and its reason", again.Text)
		}
		if n := strings.Count(e.ReadFile(e.Shop), "\n"); n != 1 {
			t.Errorf("the shop sent %d emails, want 1:\n%s", n, e.ReadFile(e.Shop))
		}
		checkSpent(t, e, ClaudeShop+"send_email", id(7))
	})

	t.Run("model_reads", func(t *testing.T) {
		cp := result(2).Text
		t.Logf("the model read from checkpoint: %s", cp)
		var cpID string
		for _, c := range l.Checkpoints {
			if c.Label == "before the edits" {
				cpID = c.ID
			}
		}
		if cpID == "" || !strings.Contains(cp, cpID) {
			t.Errorf("the checkpoint's id %q is not in what the model read: %q", cpID, cp)
		}
		if !strings.Contains(cp, "rewind") {
			t.Errorf("the checkpoint's result does not tell the model how to go back (no \"rewind\"): %q", cp)
		}
		list := result(8).Text
		t.Logf("the model read from list: %s", list)
		for _, i := range []int{3, 4, 5, 6, 7} {
			if !strings.Contains(list, id(i)) {
				t.Errorf("list's result does not name step %d's call %s (%s), which the model needs to rewind to before it", i, id(i), calls[i-1].Name)
			}
		}
	})

	t.Run("rewind_by_cli", func(t *testing.T) {
		e := e.For(t)
		want, err := m.Trees.Before(id(3))
		if err != nil {
			t.Fatal(err)
		}
		r := e.Rewind(e.Project, id(3))
		got, err := ReadTree(e.Project)
		if err != nil {
			t.Fatal(err)
		}
		if d := Diff(want, got); len(d) > 0 {
			t.Errorf("agent-rewind rewind %s (to %s): the files differ from before that call:\n%s", id(3), r.To, strings.Join(d, "\n"))
		}
		e.VerifyChain(e.Project)
	})
}

// checkSpent checks that the ledger has the effect that tool call fired as spent, once.
func checkSpent(t *testing.T, e *Env, what, callID string) {
	t.Helper()
	for _, ef := range e.Effects(e.Project) {
		if ef.ToolUseID == callID {
			if ef.State != "spent" || ef.Generation != 1 {
				t.Errorf("%s (call %s): ledger state %q, generation %d, want spent once", what, callID, ef.State, ef.Generation)
			}
			return
		}
	}
	t.Errorf("%s (call %s) is not in the effect ledger: %+v", what, callID, e.Effects(e.Project))
}

// TestClaudeCodeSubfolder starts Claude Code in a subfolder of the repository with the plugin
// and also the server `claude mcp add agent-rewind -- agent-rewind mcp` registers (the
// README's two ways): the hooks' automatic checkpoint and both servers' checkpoints must be in
// the repository's store, the one the CLI finds from the subfolder too.
func TestClaudeCodeSubfolder(t *testing.T) {
	e := New(t)
	e.ClaudeMCPAdd(e.Sub, "", "agent-rewind", "agent-rewind", "mcp")
	const p, a = ClaudePluginServer, ClaudeAddedServer
	m := e.Model(mockmodel.Sequence("done",
		toolSearch(p+"checkpoint", a+"checkpoint"),
		mockmodel.Call(map[string]string{"label": "by the plugin's server"}, p+"checkpoint"),
		mockmodel.Call(map[string]string{"label": "by the added server"}, a+"checkpoint"),
		bash("printf 'more notes\\n' >> notes.txt"),
	))
	s := e.Claude(m, e.Sub, true, "add to the notes")
	calls := m.Calls()
	if len(calls) != 4 {
		t.Fatalf("the model made %d calls, want the script's 4: %+v\nlast answer: %q", len(calls), calls, m.Last().LastUserText())
	}
	for _, c := range calls[1:3] {
		if r, _ := m.Result(c.ID); r.IsError {
			t.Errorf("%s failed: %q", c.Name, r.Text)
		}
	}
	t.Logf("session %s in %s: %v", s.SessionID, e.Sub, s.Wall)
	var root, sub Store
	if r := e.CLI(e.Project, &root, "store"); r.Code != 0 {
		// Where did it all go? The subfolder's own store, when the entry points chose it.
		var l List
		e.CLI(e.Sub, &l, "--workspace", e.Sub, "list")
		t.Fatalf("the repository %s has no store after a session in its subfolder: %s\nthe subfolder's own store has: asked-for %q, automatic %q", e.Project, strings.TrimSpace(r.Stdout), l.Labels("normal"), l.Labels("auto"))
	}
	l := e.List(e.Project)
	for _, label := range []string{"by the plugin's server", "by the added server"} {
		if !slices.Contains(l.Labels("normal"), label) {
			t.Errorf("the checkpoint %q is not in the repository's store %s (its asked-for checkpoints: %q)", label, root.Store, l.Labels("normal"))
		}
	}
	if _, ok := l.Call(calls[3].ID); !ok {
		t.Errorf("the hooks' automatic checkpoint before %s is not in the repository's store %s (its calls: %v)", calls[3].ID, root.Store, l.Calls())
	}
	if r := e.CLI(e.Sub, &sub, "store"); r.Code != 0 || sub.ID != root.ID {
		t.Errorf("agent-rewind store in the subfolder: exit %d, store %q (%s), want the repository's %s (%s)\n%s", r.Code, sub.ID, sub.Workspace, root.ID, root.Workspace, r.Stdout)
	}
}

// TestClaudeCodeSettingsHooks sets agent-rewind up without the plugin. First as the plugin's
// README used to say (its hooks member copied into .claude/settings.json), which Claude Code
// 2.1.328 refuses on every Bash and MCP call ("Hook command references ${CLAUDE_PLUGIN_ROOT}
// but the hook is not associated with a plugin", measured before setup existed): doctor
// reports it and names the fix, agent-rewind setup claude-code, run here from the subfolder.
// After it, a session at the root is guarded: its MCP server (.mcp.json) and its hooks write
// to one store, a repeated push is refused with the reason in what the model reads, and a
// matcher edited away is what doctor reports. From a subfolder Claude Code reads no
// .claude/settings.json of the root (its issues 36793, 76441, 86187): no hook runs, which is
// the client's fact and what setup's note says; setup --user puts the hooks in
// ~/.claude/settings.json, and the subfolder's session is guarded too.
func TestClaudeCodeSettingsHooks(t *testing.T) {
	const a = ClaudeAddedServer
	pushTwice := func(e *Env, dir string) (*Model, ClaudeSession) {
		m := e.Model(mockmodel.Sequence("done",
			toolSearch(a+"checkpoint"),
			mockmodel.Call(map[string]string{"label": "by setup's server"}, a+"checkpoint"),
			bash("git push origin main"),
			bash("git push origin main"),
		))
		return m, e.Claude(m, dir, false, "push")
	}
	// guarded checks a pushTwice session: the checkpoint and the hooks in the project's store, the
	// second push refused with the reason in what the model read.
	guarded := func(t *testing.T, e *Env, m *Model) {
		t.Helper()
		calls := m.Calls()
		if len(calls) != 4 {
			t.Fatalf("the model made %d calls, want 4: %+v\nlast answer: %q", len(calls), calls, m.Last().LastUserText())
		}
		if r, _ := m.Result(calls[1].ID); r.IsError {
			t.Errorf("setup's MCP server: the checkpoint failed: %q", r.Text)
		}
		l := e.List(e.Project)
		if !slices.Contains(l.Labels("normal"), "by setup's server") {
			t.Errorf("the MCP checkpoint is not in the project's store: %q", l.Labels("normal"))
		}
		if _, ok := l.Call(calls[2].ID); !ok {
			t.Errorf("the hooks took no automatic checkpoint before the push %s: calls %v", calls[2].ID, l.Calls())
		}
		first, _ := m.Result(calls[2].ID)
		again, _ := m.Result(calls[3].ID)
		if first.IsError || len(e.Pushes()) != 1 {
			t.Errorf("the first push: the model read %q; pushes %v", first.Text, e.Pushes())
		}
		if !again.IsError || !strings.Contains(again.Text, "agent-rewind refused effect") || !strings.Contains(again.Text, "already fired") {
			t.Errorf("the repeated push: the model read %q, want the guard's refusal and its reason", again.Text)
		}
		checkSpent(t, e, "git push", calls[2].ID)
	}

	t.Run("root", func(t *testing.T) {
		e := New(t)
		e.ClaudeSettingsHooks()
		d := e.Doctor(e.Project)
		if d.Code != 1 || !d.Has("runs ${CLAUDE_PLUGIN_ROOT}, copied from the plugin", "agent-rewind setup claude-code") {
			t.Fatalf("doctor with the plugin's hooks copied: exit %d, problems %+v", d.Code, d.Problems)
		}
		s := e.Setup(e.Sub, "", "claude-code")
		if s.Workspace != e.Project || !strings.Contains(strings.Join(s.Notes, "\n"), "setup claude-code --user") {
			t.Errorf("setup in %s: workspace %s, notes %q", e.Sub, s.Workspace, s.Notes)
		}
		if d := e.Doctor(e.Project); len(d.Of("claude-code")) > 0 {
			t.Errorf("doctor after setup: %+v", d.Of("claude-code"))
		}
		m, _ := pushTwice(e, e.Project)
		guarded(t, e, m)

		// A matcher edited away: what doctor reports, and the command that fixes it.
		settings := filepath.Join(e.Project, ".claude", "settings.json")
		e.WriteFile(settings, strings.Replace(e.ReadFile(settings), "Bash|PowerShell|Edit|Write|MultiEdit|NotebookEdit|mcp__.*", "Bash", 1))
		d = e.Doctor(e.Project)
		if d.Code != 1 || !d.Has("lets PowerShell, mcp__slack__slack_post_message, Edit, Write, MultiEdit, NotebookEdit by unguarded", "agent-rewind setup claude-code") {
			t.Errorf("doctor with the PreToolUse matcher edited to Bash: exit %d, problems %+v", d.Code, d.Problems)
		}
		e.Setup(e.Project, "", "claude-code")
		if d := e.Doctor(e.Project); len(d.Of("claude-code")) > 0 {
			t.Errorf("doctor after the fix it named: %+v", d.Of("claude-code"))
		}
	})

	t.Run("subfolder", func(t *testing.T) {
		e := New(t)
		e.Setup(e.Project, "", "claude-code")
		m := e.Model(mockmodel.Sequence("done", bash("printf 'more notes\\n' >> notes.txt")))
		e.Claude(m, e.Sub, false, "add to the notes")
		calls := m.Calls()
		if len(calls) != 1 {
			t.Fatalf("the model made %d calls, want 1", len(calls))
		}
		var l List
		e.CLI(e.Project, &l, "list")
		if _, ok := l.Call(calls[0].ID); ok {
			t.Errorf("Claude Code %s now runs the root's .claude/settings.json hooks from a subfolder: update setup's note and docs/agents.md", ClaudeVersion)
		}
		s := e.Setup(e.Sub, "", "claude-code", "--user")
		if s.Scope != "user" || len(s.Files) != 2 {
			t.Fatalf("setup --user: %+v", s)
		}
		m, _ = pushTwice(e, e.Sub)
		guarded(t, e, m)
	})
}

// TestClaudeCodeGuardCannotRun plays a session with the plugin where the guard cannot run: with
// no binary installed (the plugin's launcher lets the call run and tells the user on every
// call), and with a guard that crashes (exit 3: "onFailure": "block" must block the call).
func TestClaudeCodeGuardCannotRun(t *testing.T) {
	t.Run("binary_missing", func(t *testing.T) {
		e := New(t)
		e.SetPath(false)
		m := e.Model(mockmodel.Sequence("done", bash("git push origin main"), bash("printf x > after.txt")))
		s := e.Claude(m, e.Project, true, "push")
		calls := m.Calls()
		if len(calls) != 2 {
			t.Fatalf("the model made %d calls, want 2: %+v", len(calls), calls)
		}
		for _, c := range calls {
			if r, _ := m.Result(c.ID); r.IsError {
				t.Errorf("%s was not run without the binary: the model read %q", c.Args, r.Text)
			}
		}
		if len(e.Pushes()) != 1 || e.ReadFile(filepath.Join(e.Project, "after.txt")) != "x" {
			t.Errorf("the calls did not run: pushes %v", e.Pushes())
		}
		notices := 0
		for _, line := range s.Messages {
			if strings.Contains(string(line), "the effect guard is NOT running") {
				notices++
			}
		}
		// Every hook (PreToolUse and PostToolUse of each call) says so.
		if notices < 4 {
			t.Errorf("the user was told %d times that the guard is not running, want once per hook call (4)", notices)
		}
		for _, c := range calls {
			if r, _ := m.Result(c.ID); strings.Contains(r.Text, "NOT running") {
				t.Logf("the model reads the notice too: %q", r.Text)
			}
		}
		t.Logf("MCP servers at start: %v", s.Init["mcp_servers"])
		for _, c := range calls {
			t.Logf("%s: %v from the model's call to its result (the hooks' share of it)", c.Args, hookTime(s, c.ID))
		}
		if slices.ContainsFunc(m.Last().Tools, func(n string) bool { return strings.HasPrefix(n, ClaudePluginServer) }) ||
			strings.Contains(m.Last().System, ClaudePluginServer) {
			t.Errorf("the plugin's MCP tools are offered without the binary")
		}
	})
	t.Run("guard_crashes", func(t *testing.T) {
		e := New(t)
		// A guard that cannot run: agent-rewind-hook exits 3, the plugin's launcher finds it
		// first on PATH. It keeps its arguments, to show the exec form's args arrive.
		crash := filepath.Join(e.Root, "crash-bin")
		argv := filepath.Join(e.Root, "crash-argv")
		e.WriteFile(filepath.Join(crash, "agent-rewind-hook"), "#!/bin/sh\nprintf '%s\\n' \"$@\" >> "+argv+"\necho 'guard crashed' >&2\nexit 3\n")
		if err := os.Chmod(filepath.Join(crash, "agent-rewind-hook"), 0o755); err != nil {
			t.Fatal(err)
		}
		e.Set("PATH", crash+string(os.PathListSeparator)+e.Get("PATH"))
		m := e.Model(mockmodel.Sequence("done", bash("printf x > blocked.txt")))
		e.Claude(m, e.Project, true, "write")
		calls := m.Calls()
		if len(calls) != 1 {
			t.Fatalf("the model made %d calls, want 1: %+v", len(calls), calls)
		}
		r, _ := m.Result(calls[0].ID)
		t.Logf("the model read: %q", r.Text)
		if fileExists(filepath.Join(e.Project, "blocked.txt")) || !r.IsError {
			t.Errorf("a PreToolUse hook that exits 3 did not block the call (onFailure: block): the model read %q", r.Text)
		}
		// The prompt hook ran first and crashed too: the prompt went on all the same (the call
		// above was made), since it has no onFailure; then the PreToolUse hook's arguments.
		got := strings.Join(strings.Fields(e.ReadFile(argv)), " ")
		prompt := strings.Join([]string{"--workspace", e.Project, "guard"}, " ")
		pre := strings.Join([]string{"--workspace", e.Project, "guard", "--checkpoint"}, " ")
		if !strings.HasPrefix(got, prompt+" "+pre) {
			t.Errorf("the hooks' arguments %q, want the prompt hook's %q then PreToolUse's %q: the exec form's args with CLAUDE_PROJECT_DIR substituted", got, prompt, pre)
		}
	})
}

// hookTime returns the time between the model's call and its result in Claude Code's stream:
// the hooks' time, with the tool's own.
func hookTime(s ClaudeSession, callID string) time.Duration {
	var start, end time.Time
	for _, line := range s.Messages {
		var msg struct {
			Type      string    `json:"type"`
			Timestamp time.Time `json:"timestamp"`
		}
		if json.Unmarshal(line, &msg) != nil || !strings.Contains(string(line), callID) {
			continue
		}
		switch msg.Type {
		case "assistant":
			start = msg.Timestamp
		case "user":
			end = msg.Timestamp
		}
	}
	if start.IsZero() || end.IsZero() {
		return 0
	}
	return end.Sub(start)
}
