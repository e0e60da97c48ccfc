package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// Cline names an MCP server's tools <server>__<tool>.
const (
	ClineServer = "agent-rewind__"
	ClineShop   = "shop__"
)

// clineShell is the step that runs cmd with Cline's shell tool.
func clineShell(cmd string) mockmodel.Step {
	return mockmodel.Call(map[string]any{"commands": []string{cmd}}, "run_commands")
}

// clineRewindTo is the step that calls agent-rewind's MCP rewind with the id of the model's
// earlier run_commands call of cmd.
func clineRewindTo(cmd string) mockmodel.Step {
	return func(c *mockmodel.Conversation) (mockmodel.ToolCall, bool) {
		if !c.HasTool(ClineServer + "rewind") {
			return mockmodel.ToolCall{}, false
		}
		for _, call := range c.Calls() {
			var args struct{ Commands []string }
			if call.Name == "run_commands" && json.Unmarshal(call.Args, &args) == nil && len(args.Commands) == 1 && args.Commands[0] == cmd {
				b, _ := json.Marshal(map[string]string{"id": call.ID})
				return mockmodel.ToolCall{Name: ClineServer + "rewind", Args: b}, true
			}
		}
		return mockmodel.ToolCall{}, false
	}
}

// clineMade returns the calls of the tools named that the model made, whether or not the
// client sent their results back (a hook's cancel ends Cline's run before it does).
func clineMade(m *Model, names ...string) []mockmodel.ToolCall {
	var out []mockmodel.ToolCall
	for _, ex := range m.Answered() {
		for _, c := range ex.Turn.ToolCalls {
			if len(names) == 0 || slices.Contains(names, c.Name) {
				out = append(out, c)
			}
		}
	}
	return out
}

// TestClineSession plays one Cline CLI session with the shipped hook and MCP entry installed:
// an MCP checkpoint, a shell change and a push, the MCP list, an MCP rewind to before the
// change by its call id, and the push again; then a CLI rewind by call id.
func TestClineSession(t *testing.T) {
	e := New(t)
	m := e.Model(mockmodel.Sequence("done",
		mockmodel.Call(map[string]any{"label": labelBeforeBump}, ClineServer+"checkpoint"),
		clineShell(bumpVersion),
		clineShell(pushMain),
		mockmodel.Call(map[string]any{}, ClineServer+"list"),
		clineRewindTo(bumpVersion),
		clineShell(pushMain),
	))
	e.ClineConfigure(m)
	e.InstallCline()
	e.CapturePayloads()
	s := e.Cline(m, e.Project, "bump the version and push it")
	for _, f := range e.SavePayloads("cline") {
		t.Logf("hook payload kept: %s", f)
	}
	if refused := m.Refused(); len(refused) > 0 {
		t.Errorf("Cline called something the mock does not serve:\n%s", strings.Join(refused, "\n"))
	}
	if pid := e.ClineHub(); pid != 0 {
		t.Errorf("Cline's hub %d still runs after the session", pid)
	}

	// a. The tools offered, and the server's instructions.
	last := m.Last()
	for _, tool := range []string{"checkpoint", "rewind", "list", "guard_effect"} {
		if !last.HasTool(ClineServer + tool) {
			t.Errorf("%s%s is not offered; tools: %v", ClineServer, tool, last.Tools)
		}
	}
	instr := e.ServerInstructions(e.Project, e.Bin.Rewind, "mcp")
	if first, _, _ := strings.Cut(instr, "\n"); !strings.Contains(strings.Join(m.Systems(), "\n"), first) {
		t.Logf("Cline %s does not put MCP server instructions in the system prompt (%q is not in it)", ClineVersion, first)
	}

	// f. What the model read of checkpoint and list.
	cp, ls := m.CallsTo(ClineServer+"checkpoint"), m.CallsTo(ClineServer+"list")
	if len(cp) != 1 || len(ls) != 1 {
		t.Fatalf("checkpoint calls %d, list calls %d: the session stopped early (exit %d)", len(cp), len(ls), s.Code)
	}
	cpText, _ := m.Result(cp[0].ID)
	lsText, _ := m.Result(ls[0].ID)
	t.Logf("the model read from checkpoint: %s", cpText.Text)
	t.Logf("the model read from list: %s", lsText.Text)
	cpID := checkpointIDOf(t, cpText.Text)
	if !strings.Contains(cpText.Text, "rewind") {
		t.Errorf("what the model read of checkpoint does not say how to go back to it (rewind)")
	}

	// b. One store.
	shells := clineMade(m, "run_commands")
	if len(shells) != 3 {
		t.Fatalf("run_commands calls: %d (exit %d)", len(shells), s.Code)
	}
	l := e.List(e.Project)
	if !hasCheckpoint(l, cpID) {
		t.Errorf("the MCP checkpoint %s is not in the project's store; stores: %v", cpID, otherStores(e))
	}

	// c. Automatic checkpoints keyed by the model's call ids; the MCP rewind by call id exact.
	for _, c := range shells[:2] {
		if call, ok := l.Call(c.ID); !ok || call.Checkpoint == "" {
			t.Errorf("the run_commands call %s has no automatic checkpoint; list's calls: %+v", c.ID, l.Calls())
		}
	}
	for _, c := range l.Calls() {
		if strings.HasPrefix(c.Tool, ClineServer) {
			t.Errorf("agent-rewind's own tool call %s (%s) got an automatic checkpoint", c.ID, c.Tool)
		}
	}
	if !strings.Contains(lsText.Text, shells[0].ID) {
		t.Errorf("the list the model read does not name the run_commands call %s", shells[0].ID)
	}
	rw := m.CallsTo(ClineServer + "rewind")
	if len(rw) != 1 {
		t.Fatalf("MCP rewind calls: %d", len(rw))
	}
	rwText, _ := m.Result(rw[0].ID)
	t.Logf("the model read from rewind: %s", rwText.Text)
	sameTree(t, m, shells[0].ID, rw[0].ID, "the MCP rewind to before "+shells[0].ID)

	// d. The repeated push is refused; what the model and the user see of it.
	if p := e.Pushes(); len(p) != 1 {
		t.Errorf("the remote received %d pushes, want 1: %v", len(p), p)
	}
	clineRefusal(t, e, m, s, shells[2].ID)

	// c, by the CLI.
	e.Rewind(e.Project, shells[1].ID)
	treeIs(t, m, shells[1].ID, "the CLI rewind to before "+shells[1].ID)
	e.VerifyChain(e.Project)
	t.Logf("session: %d requests in %v, exit %d", len(m.Log()), s.Wall, s.Code)
}

// TestClineMCPEffect plays the shop's send_email twice in one Cline session: the second must be
// refused by the hook.
func TestClineMCPEffect(t *testing.T) {
	e := New(t)
	m := e.Model(mockmodel.Sequence("done",
		mockmodel.Call(customerEmail, ClineShop+"send_email"),
		mockmodel.Call(customerEmail, ClineShop+"send_email"),
	))
	e.ClineConfigure(m)
	e.InstallCline()
	e.CapturePayloads()
	s := e.Cline(m, e.Project, "tell the customer")
	for _, f := range e.SavePayloads("cline") {
		t.Logf("hook payload kept: %s", f)
	}
	mails := clineMade(m, ClineShop+"send_email")
	if len(mails) != 2 {
		t.Fatalf("send_email calls: %d (exit %d)", len(mails), s.Code)
	}
	if n := strings.Count(e.ReadFile(e.Shop), "\n"); n != 1 {
		t.Errorf("the shop sent %d emails, want 1", n)
	}
	clineRefusal(t, e, m, s, mails[1].ID)
}

// clineRefusal checks what is seen of the refusal of call id: the model reads the reason when
// Cline hands it a result; when a hook's cancel ends the run instead (Cline 3.0.65), the model
// reads nothing more, which the test records, and the reason must be where the user sees it.
func clineRefusal(t *testing.T, e *Env, m *Model, s ClineSession, id string) {
	t.Helper()
	const marker = "agent-rewind refused effect"
	if r, ok := m.Result(id); ok {
		t.Logf("the model read from the refused call: %q", r.Text)
		if !strings.Contains(r.Text, marker) {
			t.Errorf("the refused call's result does not carry the refusal: %q", r.Text)
		}
		return
	}
	t.Logf("Cline %s sent the model no result for the refused call %s: the hook's cancel ended the run (exit %d)", ClineVersion, id, s.Code)
	if !strings.Contains(s.Stdout+s.Stderr+e.ClineLog(), marker) {
		t.Errorf("the refusal's reason is nowhere the user sees it (cline's output, %s)", filepath.Join(e.ClineHome(), "data", "logs", "cline.log"))
	}
}

// TestClineWithoutBinary plays a shell change with the hook and MCP entry installed but
// agent-rewind not on PATH: the hook script exits 127, and Cline 3.0.65 runs the call anyway.
func TestClineWithoutBinary(t *testing.T) {
	e := New(t)
	e.SetPath(false)
	m := e.Model(mockmodel.Sequence("done", clineShell(bumpVersion)))
	e.ClineConfigure(m)
	e.InstallCline()
	s := e.Cline(m, e.Project, "bump the version")
	shells := m.CallsTo("run_commands")
	if len(shells) != 1 {
		t.Fatalf("run_commands calls: %d (exit %d)", len(shells), s.Code)
	}
	ran := e.ReadFile(filepath.Join(e.Project, "app.txt")) == "version 2\n"
	r, _ := m.Result(shells[0].ID)
	t.Logf("without the binary the call ran: %v; the model read: %q; exit %d", ran, r.Text, s.Code)
	if !ran {
		t.Errorf("the call did not run: Cline %s let it run when its hook failed when this harness was written; update the support matrix", ClineVersion)
	}
	if m.Last().HasTool(ClineServer + "checkpoint") {
		t.Errorf("agent-rewind's tools are offered with no binary to serve them")
	}
}

// TestClineHookCancel records what Cline 3.0.65 does with a PreToolUse hook that answers
// {"cancel": true, "errorMessage": ...} (what the guard answers to refuse), with a hook of the
// test's own so that it shows the client's behaviour whatever the guard reads: whether the
// call runs, whether the model is sent a result with the reason, and where the reason shows.
func TestClineHookCancel(t *testing.T) {
	e := New(t)
	const reason = "harness-cancel: this push was refused"
	m := e.Model(mockmodel.Sequence("done", clineShell(pushMain), clineShell("printf after > after.txt")))
	e.ClineConfigure(m)
	hook := filepath.Join(e.Project, ".clinerules", "hooks", "PreToolUse")
	e.WriteFile(hook, "#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{\"cancel\":true,\"errorMessage\":\""+reason+"\"}'\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	s := e.Cline(m, e.Project, "push it")
	shells := clineMade(m)
	if len(shells) == 0 {
		t.Fatalf("the model made no call (exit %d)", s.Code)
	}
	if p := e.Pushes(); len(p) != 0 {
		t.Errorf("the cancelled push ran: the remote received %v", p)
	}
	r, got := m.Result(shells[0].ID)
	t.Logf("Cline %s, hook answered cancel: exit %d; the model was sent a result: %v (%q); calls made after it: %d; reason in cline's output: %v, in its log: %v",
		ClineVersion, s.Code, got, r.Text, len(shells)-1, strings.Contains(s.Stdout+s.Stderr, reason), strings.Contains(e.ClineLog(), reason))
	// The client's fact as measured: the run ends at the cancel, the model is sent nothing more,
	// and the reason is only in Cline's log.
	if got && strings.Contains(r.Text, reason) {
		t.Logf("Cline now hands the model the cancel's reason: update the support matrix")
	} else if !strings.Contains(e.ClineLog(), reason) {
		t.Errorf("the cancel's reason is neither in what the model read nor in Cline's log")
	}
}

// TestClineAfterSetup sets Cline's CLI up with agent-rewind setup cline (the project's hook
// scripts, absolute paths) and agent-rewind setup cline --user (the MCP server in Cline's
// global settings, naming the project, which setup's note says): doctor finds nothing wrong,
// and a session is guarded: the MCP server and the hooks write to one store, and a repeated push
// is refused with the reason in what the model reads (the command's result).
func TestClineAfterSetup(t *testing.T) {
	e := New(t)
	m := e.Model(mockmodel.Sequence("done",
		mockmodel.Call(map[string]any{"label": labelBeforeBump}, ClineServer+"checkpoint"),
		clineShell(pushMain),
		clineShell(pushMain),
	))
	e.ClineProvider(m)
	s := e.Setup(e.Sub, "", "cline")
	if len(s.Files) != 2 || !strings.Contains(strings.Join(s.Notes, "\n"), "agent-rewind setup cline --user") {
		t.Fatalf("setup cline: %+v", s)
	}
	if s := e.Setup(e.Sub, "", "cline", "--user"); len(s.Files) != 1 || !strings.Contains(strings.Join(s.Notes, "\n"), "one project at a time") {
		t.Fatalf("setup cline --user: %+v", s)
	}
	if d := e.Doctor(e.Project); len(d.Of("cline")) > 0 {
		t.Fatalf("doctor after setup: %+v", d.Of("cline"))
	}
	sess := e.Cline(m, e.Project, "push the release")
	cp, shells := m.CallsTo(ClineServer+"checkpoint"), clineMade(m, "run_commands")
	if len(cp) != 1 || len(shells) != 2 {
		t.Fatalf("calls played: checkpoint %d, shell %d (exit %d)", len(cp), len(shells), sess.Code)
	}
	checkOneStore(t, e, m, cp[0].ID, shells[0].ID)
	if len(e.Pushes()) != 1 {
		t.Errorf("the remote received %d pushes, want 1", len(e.Pushes()))
	}
	clineRefusal(t, e, m, sess, shells[1].ID)
}
