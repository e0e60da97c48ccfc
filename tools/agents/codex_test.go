package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// TestCodexSession plays one Codex CLI session with the shipped .codex/ installed, the hooks
// trusted with --dangerously-bypass-hook-trust, and the harness's XDG folders set (as many
// users have them): the MCP tools found through tool_search, an MCP checkpoint, a shell change
// and a push, the MCP list, an MCP rewind to before the change by its call id, the push
// again, and a shop email twice. Then a CLI rewind by call id.
func TestCodexSession(t *testing.T) {
	e := New(t)
	m := e.Model(mockmodel.Sequence("done",
		CodexSearch("agent-rewind checkpoint rewind list"),
		mockmodel.Call(map[string]any{"label": labelBeforeBump}, CodexServer+"checkpoint"),
		CodexShell(bumpVersion),
		CodexShell(pushMain),
		mockmodel.Call(map[string]any{}, CodexServer+"list"),
		CodexRewindTo(bumpVersion),
		CodexShell(pushMain),
		CodexSearch("shop send_email"),
		mockmodel.Call(customerEmail, CodexShop+"send_email"),
		mockmodel.Call(customerEmail, CodexShop+"send_email"),
	))
	e.CodexConfigure(m)
	e.InstallCodex()
	e.CapturePayloads()
	s := e.Codex(m, e.Project, CodexOptions{BypassHookTrust: true}, "bump the version, push it, and tell the customer")
	for _, f := range e.SavePayloads("codex") {
		t.Logf("hook payload kept: %s", f)
	}
	codexNoOtherHost(t, m)
	last := m.Last()
	if !strings.HasPrefix(last.LastUserText(), "bump the version") && last.Messages[len(last.Messages)-1].Text != "" {
		t.Errorf("the session did not play to its end: the model's last answer was %q", m.Log()[len(m.Log())-1].Turn.Text)
	}
	codexKeepTranscript(t, e, s)

	// a. The tools offered: behind tool_search, agent-rewind's tools once searched; the server's
	// instructions: their first line in the system prompt, all of them in the search's result.
	instr := e.ServerInstructions(e.Project, e.Bin.Rewind, "mcp")
	first, _, _ := strings.Cut(instr, "\n")
	if !strings.Contains(strings.Join(m.Systems(), "\n"), CodexServer[:len(CodexServer)-2]+": "+first) {
		t.Errorf("the system prompt does not name agent-rewind's deferred namespace with its instructions' first line %q", first)
	}
	searches := m.CallsTo("tool_search")
	if len(searches) == 0 {
		t.Fatalf("no tool_search call was played; tools offered: %v", last.Tools)
	}
	if r, _ := m.Result(searches[0].ID); !strings.Contains(r.Text, jsonText(t, instr)) {
		t.Errorf("the tool search result does not carry the server's instructions: %.400s", r.Text)
	}
	for _, tool := range []string{"checkpoint", "rewind", "list", "guard_effect"} {
		if !last.HasTool(CodexServer + tool) {
			t.Errorf("%s%s is not offered after the search; tools: %v", CodexServer, tool, last.Tools)
		}
	}

	// f. What the model reads from checkpoint and list (Codex hands it the structured result).
	cp := m.CallsTo(CodexServer + "checkpoint")
	ls := m.CallsTo(CodexServer + "list")
	if len(cp) != 1 || len(ls) != 1 {
		t.Fatalf("checkpoint calls %d, list calls %d; the session stopped early", len(cp), len(ls))
	}
	cpText, _ := m.Result(cp[0].ID)
	lsText, _ := m.Result(ls[0].ID)
	t.Logf("the model read from checkpoint: %s", cpText.Text)
	t.Logf("the model read from list: %s", lsText.Text)
	cpID := checkpointIDOf(t, cpText.Text)
	if !strings.Contains(cpText.Text, "rewind") {
		t.Errorf("what the model read of checkpoint does not say how to go back to it (rewind)")
	}

	// b. One store: the MCP server's checkpoint is in the store the CLI (and the hooks) use.
	l := e.List(e.Project)
	if !hasCheckpoint(l, cpID) {
		t.Errorf("the MCP checkpoint %s is not in the project's store %s (the hooks' store; other stores: %v): Codex passes MCP servers only part of its environment (XDG_STATE_HOME=%s)",
			cpID, e.StoreOf(e.Project).Store, otherStores(e), e.Get("XDG_STATE_HOME"))
	}

	// c. Automatic checkpoints keyed by the model's call ids, none for agent-rewind's own tools.
	shells := m.CallsTo("exec_command")
	if len(shells) != 3 {
		t.Fatalf("shell calls: %d", len(shells))
	}
	for _, c := range shells[:2] { // the third is the refused push, which never runs
		if call, ok := l.Call(c.ID); !ok || call.Checkpoint == "" {
			t.Errorf("the shell call %s has no automatic checkpoint; list's calls: %+v", c.ID, l.Calls())
		}
	}
	for _, c := range l.Calls() {
		if strings.HasPrefix(c.Tool, CodexServer) {
			t.Errorf("agent-rewind's own tool call %s (%s) got an automatic checkpoint", c.ID, c.Tool)
		}
	}
	for _, c := range ls {
		if !strings.Contains(lsText.Text, shells[0].ID) {
			t.Errorf("the list the model read (call %s) does not name the shell call %s", c.ID, shells[0].ID)
		}
	}
	rw := m.CallsTo(CodexServer + "rewind")
	if len(rw) != 1 {
		t.Fatalf("MCP rewind calls: %d", len(rw))
	}
	rwText, _ := m.Result(rw[0].ID)
	t.Logf("the model read from rewind: %s", rwText.Text)
	sameTree(t, m, shells[0].ID, rw[0].ID, "the MCP rewind to before "+shells[0].ID)

	// d. The repeated push and the repeated email are refused, with the reason in what the
	// model read.
	if r, _ := m.Result(shells[2].ID); !strings.Contains(r.Text, "agent-rewind refused effect") {
		t.Errorf("the repeated push's result does not carry the refusal: %q", r.Text)
	}
	if p := e.Pushes(); len(p) != 1 {
		t.Errorf("the remote received %d pushes, want 1: %v", len(p), p)
	}
	mails := m.CallsTo(CodexShop + "send_email")
	if len(mails) != 2 {
		t.Fatalf("send_email calls: %d", len(mails))
	}
	if r, _ := m.Result(mails[1].ID); !strings.Contains(r.Text, "agent-rewind refused effect") {
		t.Errorf("the repeated email's result does not carry the refusal: %q", r.Text)
	}
	if n := strings.Count(e.ReadFile(e.Shop), "\n"); n != 1 {
		t.Errorf("the shop sent %d emails, want 1", n)
	}

	// c, by the CLI: rewind to before the first push, by its call id.
	e.Rewind(e.Project, shells[1].ID)
	treeIs(t, m, shells[1].ID, "the CLI rewind to before "+shells[1].ID)
	e.VerifyChain(e.Project)
	t.Logf("session %s: %d requests in %v", s.ThreadID, len(m.Log()), s.Wall)
}

// TestCodexOneStore plays a short session with REWIND_STATE_DIR and XDG_STATE_HOME unset (so
// the MCP server Codex starts with its short environment finds the same state folder as the
// hooks), and the hooks trusted as /hooks trusts them: [hooks.state] trusted_hash entries
// with the hashes `codex app-server` hooks/list reports.
func TestCodexOneStore(t *testing.T) {
	e := New(t)
	e.Set("XDG_STATE_HOME", "")
	m := e.Model(mockmodel.Sequence("done",
		CodexSearch("agent-rewind checkpoint rewind"),
		mockmodel.Call(map[string]any{"label": labelBeforeBump}, CodexServer+"checkpoint"),
		CodexShell(bumpVersion),
		mockmodel.Call(map[string]any{}, CodexServer+"list"),
		CodexRewindTo(bumpVersion),
	))
	e.CodexConfigure(m)
	e.InstallCodex()
	hooks := e.CodexHooks(e.Project)
	if len(hooks) != 3 {
		t.Fatalf("hooks/list found %d hooks in the project, want the 3 of .codex/hooks.json (PreToolUse, PostToolUse, UserPromptSubmit): %+v", len(hooks), hooks)
	}
	for _, h := range hooks {
		if h.TrustStatus != "untrusted" {
			t.Errorf("hook %s is %q before it was trusted", h.Key, h.TrustStatus)
		}
	}
	e.CodexTrustHooks(hooks)
	for _, h := range e.CodexHooks(e.Project) {
		if h.TrustStatus != "trusted" {
			t.Errorf("hook %s is %q after its trusted_hash was written", h.Key, h.TrustStatus)
		}
	}
	e.Codex(m, e.Project, CodexOptions{}, "bump the version")
	codexNoOtherHost(t, m)
	cp, shells, rw := m.CallsTo(CodexServer+"checkpoint"), m.CallsTo("exec_command"), m.CallsTo(CodexServer+"rewind")
	if len(cp) != 1 || len(shells) != 1 || len(rw) != 1 {
		t.Fatalf("calls played: checkpoint %d, shell %d, rewind %d", len(cp), len(shells), len(rw))
	}
	cpText, _ := m.Result(cp[0].ID)
	l := e.List(e.Project)
	if id := checkpointIDOf(t, cpText.Text); !hasCheckpoint(l, id) {
		t.Errorf("the MCP checkpoint %s is not in the project's store; other stores: %v", id, otherStores(e))
	}
	if call, ok := l.Call(shells[0].ID); !ok || call.Checkpoint == "" {
		t.Errorf("the shell call %s has no automatic checkpoint (the trusted hooks did not run?); calls: %+v", shells[0].ID, l.Calls())
	}
	if ls := m.CallsTo(CodexServer + "list"); len(ls) == 1 {
		r, _ := m.Result(ls[0].ID)
		if !strings.Contains(r.Text, shells[0].ID) {
			t.Errorf("the list the model read does not name the shell call %s: %s", shells[0].ID, r.Text)
		}
	} else {
		t.Errorf("list calls: %d", len(ls))
	}
	sameTree(t, m, shells[0].ID, rw[0].ID, "the MCP rewind to before "+shells[0].ID)
}

// TestCodexWithoutBinary plays a shell change with the shipped .codex/ installed and trusted
// but agent-rewind not on PATH: Codex runs the call anyway (a failed hook does not block,
// its issue 41979), the model reads the command's own output, and the user sees
// "hook: PreToolUse Failed" and no reason; agent-rewind's MCP server does not start, which
// codex exec does not mention, so tool_search finds none of its tools.
func TestCodexWithoutBinary(t *testing.T) {
	e := New(t)
	e.SetPath(false)
	m := e.Model(mockmodel.Sequence("done",
		CodexSearch("agent-rewind checkpoint"),
		CodexShell(bumpVersion),
	))
	e.CodexConfigure(m)
	e.InstallCodex()
	s := e.Codex(m, e.Project, CodexOptions{BypassHookTrust: true, Human: true}, "bump the version")
	codexNoOtherHost(t, m)
	shells := m.CallsTo("exec_command")
	if len(shells) != 1 {
		t.Fatalf("shell calls: %d", len(shells))
	}
	if got := e.ReadFile(filepath.Join(e.Project, "app.txt")); got != "version 2\n" {
		t.Errorf("app.txt is %q: the shell call did not run (Codex fails open, so it should)", got)
	}
	r, _ := m.Result(shells[0].ID)
	t.Logf("the model read from the shell call: %q", r.Text)
	if m.Last().HasTool(CodexServer + "checkpoint") {
		t.Errorf("agent-rewind's tools are offered with no binary to serve them")
	}
	search, _ := m.Result(m.CallsTo("tool_search")[0].ID)
	t.Logf("the model read from tool_search: %.300s", search.Text)
	t.Logf("what the user saw (codex exec's output on stderr):\n%s", s.Stderr)
	// Codex's fact: it shows that the hook failed, not why, and nothing of the MCP server
	// that did not start.
	if !strings.Contains(s.Stderr, "hook: PreToolUse Failed") {
		t.Errorf("codex exec's output does not show the failed hook (hook: PreToolUse Failed)")
	}
	if strings.Contains(s.Stderr, "agent-rewind") {
		t.Logf("Codex now names agent-rewind in its output: update the support matrix")
	}
	if st, err := os.Stat(e.State); err == nil && st.IsDir() {
		if entries, _ := os.ReadDir(e.State); len(entries) > 0 {
			t.Errorf("a store was written with no binary installed: %v", entries)
		}
	}
}

// codexNoOtherHost fails the test when Codex called anything but the model's API.
func codexNoOtherHost(t *testing.T, m *Model) {
	t.Helper()
	if refused := m.Refused(); len(refused) > 0 {
		t.Errorf("Codex called something the mock does not serve:\n%s", strings.Join(refused, "\n"))
	}
}

// codexKeepTranscript logs where the session's rollout file is (issue 32 reads this format).
func codexKeepTranscript(t *testing.T, e *Env, s CodexSession) {
	if s.Rollout == "" {
		t.Errorf("Codex wrote no rollout file for thread %s under %s", s.ThreadID, filepath.Join(e.CodexHome(), "sessions"))
		return
	}
	t.Logf("rollout file: %s", s.Rollout)
}

// TestCodexAfterSetup sets Codex up as docs/agents.md says: agent-rewind setup codex (run from
// the subfolder; the project already trusted), which doctor then finds untrusted (Codex skips
// an untrusted hook silently) and names the fix, agent-rewind setup codex --trust-hooks, which
// asks the real codex app-server for the hooks' hashes. After it doctor finds nothing wrong,
// and a session without --dangerously-bypass-hook-trust, with the harness's XDG_STATE_HOME set,
// is guarded: the MCP server and the hooks write to one store, and a repeated push is refused
// with the reason in what the model reads.
func TestCodexAfterSetup(t *testing.T) {
	e := New(t)
	m := e.Model(mockmodel.Sequence("done",
		CodexSearch("agent-rewind checkpoint"),
		mockmodel.Call(map[string]any{"label": labelBeforeBump}, CodexServer+"checkpoint"),
		CodexShell(pushMain),
		CodexShell(pushMain),
	))
	e.CodexConfigure(m)
	s := e.Setup(e.Sub, "", "codex")
	if s.Workspace != e.Project || len(s.Files) != 2 || !strings.Contains(strings.Join(s.Notes, "\n"), "--trust-hooks") {
		t.Fatalf("setup codex: %+v", s)
	}
	d := e.Doctor(e.Project)
	if d.Code != 1 || !d.Has("is untrusted, and Codex skips a hook it does not trust", "agent-rewind setup codex --trust-hooks") {
		t.Fatalf("doctor before the hooks are trusted: exit %d, problems %+v", d.Code, d.Problems)
	}
	e.Setup(e.Sub, "", "codex", "--trust-hooks")
	for _, h := range e.CodexHooks(e.Project) {
		if h.TrustStatus != "trusted" {
			t.Errorf("after setup --trust-hooks, hooks/list reports %s as %s", h.Key, h.TrustStatus)
		}
	}
	if d := e.Doctor(e.Project); len(d.Of("codex")) > 0 {
		t.Fatalf("doctor after --trust-hooks: %+v", d.Of("codex"))
	}
	e.Codex(m, e.Project, CodexOptions{}, "push the release")
	codexNoOtherHost(t, m)
	cp, shells := m.CallsTo(CodexServer+"checkpoint"), m.CallsTo("exec_command")
	if len(cp) != 1 || len(shells) != 2 {
		t.Fatalf("calls played: checkpoint %d, shell %d", len(cp), len(shells))
	}
	checkOneStore(t, e, m, cp[0].ID, shells[0].ID)
	if r, _ := m.Result(shells[1].ID); !strings.Contains(r.Text, "agent-rewind refused effect") || len(e.Pushes()) != 1 {
		t.Errorf("the repeated push: the model read %q; pushes %v", r.Text, e.Pushes())
	}
	// --remove takes out the files and the trust entries setup wrote.
	e.Setup(e.Project, "", "codex", "--remove")
	if cfg := e.ReadFile(filepath.Join(e.CodexHome(), "config.toml")); strings.Contains(cfg, "trusted_hash") || !strings.Contains(cfg, "trust_level") {
		t.Errorf("after --remove, ~/.codex/config.toml:\n%s", cfg)
	}
	if fileExists(filepath.Join(e.Project, ".codex")) {
		t.Errorf("after --remove, %s is still there", filepath.Join(e.Project, ".codex"))
	}
}
