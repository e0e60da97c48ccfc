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

// Copilot CLI names a shell call's tool bash, and an MCP tool <server>-<tool>.
const copilotServer = "agent-rewind-"

func copilotBash(command string) mockmodel.Step {
	return mockmodel.Call(map[string]string{"command": command, "description": command}, "bash")
}

// TestCopilotCLI plays GitHub Copilot CLI 1.0.102 with VS Code's integration files copied into
// the project (docs/agents.md: Copilot CLI reads .github/hooks/*.json, shared with VS Code) and
// the shop server added with `copilot mcp add`. The user checkpoints by hand; a first session
// edits, commits, pushes, emails and asks agent-rewind's MCP server for a checkpoint and the
// list; the user rewinds with the CLI; a second session pushes and emails again (both must be
// refused with the reason in what the model reads) and rewinds through MCP. Every check is a
// subtest of these two sessions.
func TestCopilotCLI(t *testing.T) {
	e := New(t)
	e.CapturePayloads()
	traced := e.TraceNetwork()
	installed := e.CopyIntegration("vscode", e.Project)
	e.CopilotMCPAdd("shop", e.Bin.Shop, "--log", e.Shop)
	var cp struct {
		ID string `json:"id"`
	}
	e.MustCLI(e.Project, &cp, "checkpoint", "before the release")
	start, err := ReadTree(e.Project)
	if err != nil {
		t.Fatal(err)
	}
	email := map[string]string{"to": "ann@example.com", "subject": "Your refund", "body": "It is on its way."}

	m1 := e.Model(mockmodel.Sequence("done",
		copilotBash("printf 'version 2\\n' > app.txt"),
		copilotBash("git add -A && git commit -qm 'version 2'"),
		copilotBash("git push origin main"),
		mockmodel.Call(email, "shop-send_email"),
		mockmodel.Call(map[string]string{"label": "after the release"}, copilotServer+"checkpoint"),
		mockmodel.Call(map[string]any{}, copilotServer+"list"),
	))
	s1 := e.Copilot(m1, e.Project, "release version 2 and tell Ann")
	calls1 := m1.Calls()
	t.Logf("first session %s: %v, %d calls; installed %v", s1.SessionID, s1.Wall, len(calls1), installed)
	if len(calls1) < 4 {
		t.Fatalf("the model made %d calls, want at least the 4 before the MCP ones: %+v\nlast answer: %q", len(calls1), calls1, m1.Last().LastUserText())
	}
	for _, c := range calls1[:4] {
		if r, _ := m1.Result(c.ID); r.IsError {
			t.Errorf("%s %s did not run: the model read %q", c.Name, c.Args, r.Text)
		}
	}

	// The user goes back to the checkpoint taken by hand.
	e.Rewind(e.Project, cp.ID)
	back, err := ReadTree(e.Project)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(start, back); len(d) > 0 {
		t.Errorf("agent-rewind rewind %s: the files differ from when it was taken:\n%s", cp.ID, strings.Join(d, "\n"))
	}

	m2 := e.Model(mockmodel.Sequence("done",
		copilotBash("git push origin main"),
		mockmodel.Call(email, "shop-send_email"),
		mockmodel.Call(map[string]string{"id": cp.ID}, copilotServer+"rewind"),
	))
	s2 := e.Copilot(m2, e.Project, "release version 2 and tell Ann")
	calls2 := m2.Calls()
	t.Logf("second session %s: %v, %d calls", s2.SessionID, s2.Wall, len(calls2))
	if len(calls2) < 2 {
		t.Fatalf("the second session made %d calls, want at least 2: %+v", len(calls2), calls2)
	}
	e.KeepTranscript("copilot-"+CopilotVersion, e.CopilotEvents(s1.SessionID))
	saved := e.SavePayloads("copilot")
	t.Logf("payloads kept: %v", saved)
	for _, m := range []*Model{m1, m2} {
		if refused := m.Refused(); len(refused) > 0 {
			t.Errorf("Copilot CLI called something the mock does not serve:\n%s", strings.Join(refused, "\n"))
		}
	}

	t.Run("no_network", func(t *testing.T) {
		outside, n := e.Connections()
		if traced && n == 0 {
			t.Errorf("strace traced no connect(2) at all: the trace did not work")
		}
		if len(outside) > 0 {
			t.Errorf("Copilot CLI connected to more than 127.0.0.1 (%d of %d connects):\n%s", len(outside), n, strings.Join(outside, "\n"))
		}
		t.Logf("%d connects traced, all to 127.0.0.1 or unix sockets", n)
	})

	t.Run("tools_offered", func(t *testing.T) {
		e := e.For(t)
		offered := m1.Last().Tools
		t.Logf("tools offered: %v", offered)
		for _, tool := range []string{"checkpoint", "list", "rewind", "guard_effect"} {
			if !slices.Contains(offered, copilotServer+tool) {
				t.Errorf("agent-rewind's %s is not offered (the MCP file copied: %v; offered: %v)", tool, installed, offered)
			}
		}
		for _, tool := range []string{"send_email", "create_refund", "get_order"} {
			if !slices.Contains(offered, "shop-"+tool) {
				t.Errorf("the shop's %s is not offered as shop-%s", tool, tool)
			}
		}
		// Copilot CLI hands the model no MCP server's instructions: the shop's are in no
		// request (the client's fact; the support matrix says so).
		shop := e.ServerInstructions(e.Project, e.Bin.Shop, "--log", filepath.Join(e.Root, "unused.jsonl"))
		if slices.ContainsFunc(m1.Answered(), func(ex mockmodel.Exchange) bool { return strings.Contains(string(ex.Conversation.Raw), shop) }) {
			t.Errorf("Copilot CLI %s now sends MCP server instructions to the model: check that agent-rewind's reach it, and update docs/agents.md", CopilotVersion)
		}
	})

	t.Run("one_store", func(t *testing.T) {
		e := e.For(t)
		// The MCP server's checkpoint and the hooks' ledger, found from the project.
		if got := e.List(e.Project).Labels("normal"); !slices.Contains(got, "after the release") {
			t.Errorf("the MCP server's checkpoint is not in the project's store (asked-for checkpoints there: %q)", got)
		}
		hooks := 0
		for _, ef := range e.Effects(e.Project) {
			if strings.HasPrefix(ef.Source, "hook:") {
				hooks++
			}
		}
		if hooks != 2 {
			t.Errorf("the project's ledger has %d effects the hooks admitted, want the push and the email: %+v", hooks, e.Effects(e.Project))
		}
	})

	t.Run("repeated_push_refused", func(t *testing.T) {
		r, _ := m2.Result(calls2[0].ID)
		t.Logf("the model read: %q", r.Text)
		if !strings.Contains(r.Text, "agent-rewind refused effect") || !strings.Contains(r.Text, "already fired") {
			t.Errorf("the repeated push after the rewind: the model read %q, want the guard's refusal and its reason", r.Text)
		}
		if n := len(e.Pushes()); n != 1 {
			t.Errorf("the remote received %d pushes, want 1: %v", n, e.Pushes())
		}
	})

	t.Run("repeated_mcp_effect_refused", func(t *testing.T) {
		r, _ := m2.Result(calls2[1].ID)
		t.Logf("the model read: %q", r.Text)
		if !strings.Contains(r.Text, "agent-rewind refused effect") {
			t.Errorf("the repeated email: the model read %q, want the guard's refusal and its reason", r.Text)
		}
		if n := strings.Count(e.ReadFile(e.Shop), "\n"); n != 1 {
			t.Errorf("the shop sent %d emails, want 1", n)
		}
	})

	t.Run("no_call_ids", func(t *testing.T) {
		e := e.For(t)
		// Copilot's hook input names no tool call, so no automatic checkpoint can be found
		// as "before call X": the hooks take none (the client's fact, docs/agents.md).
		if auto := e.List(e.Project).Labels("auto"); len(auto) > 0 {
			t.Errorf("automatic checkpoints without call ids: %q", auto)
		}
	})

	t.Run("model_reads", func(t *testing.T) {
		e := e.For(t)
		if len(calls1) < 6 {
			t.Skipf("agent-rewind's MCP tools were not offered (tools_offered), so the model read nothing of them; it said: %q", m1.Last().LastUserText())
		}
		cpText, _ := m1.Result(calls1[4].ID)
		list, _ := m1.Result(calls1[5].ID)
		t.Logf("checkpoint: %s\nlist: %s", cpText.Text, list.Text)
		var made string
		for _, c := range e.List(e.Project).Checkpoints {
			if c.Label == "after the release" {
				made = c.ID
			}
		}
		if made == "" || !strings.Contains(cpText.Text, made) || !strings.Contains(cpText.Text, "rewind") {
			t.Errorf("the checkpoint's result does not name its id %q and the way back: %q", made, cpText.Text)
		}
		if !strings.Contains(list.Text, cp.ID) {
			t.Errorf("list's result does not name the checkpoint %s: %q", cp.ID, list.Text)
		}
	})

	t.Run("rewind_by_mcp", func(t *testing.T) {
		if len(calls2) < 3 {
			t.Skip("agent-rewind's MCP tools were not offered (tools_offered)")
		}
		got, err := m2.Trees.After(calls2[2].ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := Diff(start, got); len(d) > 0 {
			t.Errorf("after the MCP rewind to %s the files differ:\n%s", cp.ID, strings.Join(d, "\n"))
		}
	})
}

// TestCopilotCLIGuardCannotRun plays sessions where the guard cannot run: no binary installed
// (the shipped hook file lets the call run; the user is not told), and a guard that crashes
// (exit 3: Copilot CLI denies a call whose hook errors, and says so to the model).
func TestCopilotCLIGuardCannotRun(t *testing.T) {
	t.Run("binary_missing", func(t *testing.T) {
		e := New(t)
		e.CopyIntegration("vscode", e.Project)
		e.SetPath(false)
		m := e.Model(mockmodel.Sequence("done", copilotBash("git push origin main"), copilotBash("printf x > after.txt")))
		s := e.Copilot(m, e.Project, "push")
		calls := m.Calls()
		if len(calls) != 2 {
			t.Fatalf("the model made %d calls, want 2: %+v\nlast answer: %q", len(calls), calls, m.Last().LastUserText())
		}
		for _, c := range calls {
			r, _ := m.Result(c.ID)
			t.Logf("%s: the model read %q (is_error %v)", c.Args, r.Text, r.IsError)
		}
		if n := len(e.Pushes()); n != 1 || !fileExists(filepath.Join(e.Project, "after.txt")) {
			t.Errorf("without the binary the calls did not run: %d pushes delivered, after.txt written: %v", n, fileExists(filepath.Join(e.Project, "after.txt")))
		}
		told := 0
		for _, ev := range s.Events {
			if b, _ := json.Marshal(ev); strings.Contains(string(b), "the effect guard is NOT running") {
				told++
			}
		}
		// The shipped hook says so in a systemMessage, which Copilot CLI does not show in -p
		// mode (not in its JSON or text output, nor in events.jsonl, measured): the client's
		// fact, which the support matrix says.
		if told > 0 {
			t.Errorf("Copilot CLI %s now shows a hook's systemMessage (%d events): update docs/agents.md", CopilotVersion, told)
		}
	})
	t.Run("guard_crashes", func(t *testing.T) {
		e := New(t)
		e.CopyIntegration("vscode", e.Project)
		crash := filepath.Join(e.Root, "crash-bin")
		e.WriteFile(filepath.Join(crash, "agent-rewind-hook"), "#!/bin/sh\necho 'guard crashed' >&2\nexit 3\n")
		if err := os.Chmod(filepath.Join(crash, "agent-rewind-hook"), 0o755); err != nil {
			t.Fatal(err)
		}
		e.Set("PATH", crash+string(os.PathListSeparator)+e.Get("PATH"))
		m := e.Model(mockmodel.Sequence("done", copilotBash("printf x > blocked.txt")))
		e.Copilot(m, e.Project, "write")
		calls := m.Calls()
		if len(calls) != 1 {
			t.Fatalf("the model made %d calls, want 1: %+v", len(calls), calls)
		}
		r, _ := m.Result(calls[0].ID)
		t.Logf("the model read: %q", r.Text)
		if fileExists(filepath.Join(e.Project, "blocked.txt")) || !strings.Contains(r.Text, "Denied by preToolUse hook") {
			t.Errorf("a preToolUse hook that exits 3 did not deny the call: the model read %q", r.Text)
		}
	})
}

// TestCopilotCLIAfterSetup sets GitHub Copilot CLI up with agent-rewind setup copilot (run from
// the subfolder, with an installed copy of the binaries). In a folder not trusted, copilot -p
// runs neither the hooks nor the MCP server, which doctor reports; once trusted as Copilot's
// prompt trusts it (trustedFolders in ~/.copilot/config.json), doctor finds nothing wrong, and
// a session without --trust-folder is guarded: the MCP server (.github/mcp.json) and the
// hooks (.github/hooks) write to one store, and a repeated push is refused with the reason in
// what the model reads. With the installed binaries gone, doctor says so and names the fix.
func TestCopilotCLIAfterSetup(t *testing.T) {
	e := New(t)
	prog := e.CopyBinaries()
	s := e.Setup(e.Sub, prog, "copilot")
	if s.Workspace != e.Project || len(s.Files) != 2 || !strings.Contains(strings.Join(s.Notes, "\n"), "--trust-folder") {
		t.Fatalf("setup copilot: %+v", s)
	}
	// Untrusted, copilot -p runs neither the hooks nor the server, silently: doctor says so.
	if d := e.Doctor(e.Project); d.Code != 1 || !d.Has("only in a trusted folder", "--trust-folder") {
		t.Errorf("doctor in an untrusted folder: exit %d, problems %+v", d.Code, d.Problems)
	}
	m0 := e.Model(mockmodel.Sequence("done", copilotBash("printf x > untrusted.txt")))
	e.CopilotTrusted(m0, e.Project, "write")
	if calls := m0.Calls(); len(calls) != 1 || m0.Last().HasTool(copilotServer+"checkpoint") {
		t.Errorf("in an untrusted folder: calls %+v; agent-rewind's tools offered: %v", calls, m0.Last().HasTool(copilotServer+"checkpoint"))
	} else if r := e.CLI(e.Project, nil, "store"); r.Code == 0 {
		t.Errorf("Copilot %s ran the hooks of an untrusted folder (the project has a store): update doctor's check and docs/agents.md", CopilotVersion)
	}
	e.CopilotTrust(e.Project)
	if d := e.Doctor(e.Project); len(d.Of("copilot")) > 0 {
		t.Fatalf("doctor after setup, the folder trusted: %+v", d.Of("copilot"))
	}
	m := e.Model(mockmodel.Sequence("done",
		mockmodel.Call(map[string]string{"label": "by setup's server"}, copilotServer+"checkpoint"),
		copilotBash("git push origin main"),
		copilotBash("git push origin main"),
	))
	e.CopilotTrusted(m, e.Project, "push the release") // trusted by its configuration, not --trust-folder
	calls := m.Calls()
	if len(calls) != 3 {
		t.Fatalf("the model made %d calls, want 3: %+v", len(calls), calls)
	}
	l := e.List(e.Project)
	if !slices.Contains(l.Labels("normal"), "by setup's server") {
		t.Errorf("setup's MCP server did not checkpoint the project's store: %q", l.Labels("normal"))
	}
	// Copilot hands the model a hook's denial as the call's text, not as a failed call.
	if r, _ := m.Result(calls[2].ID); !strings.Contains(r.Text, "Denied by preToolUse hook: agent-rewind refused effect") || len(e.Pushes()) != 1 {
		t.Errorf("the repeated push: the model read %q; pushes %v", r.Text, e.Pushes())
	}
	if effects := e.Effects(e.Project); len(effects) != 1 || !strings.HasPrefix(effects[0].Source, "hook:copilot") {
		t.Errorf("the hooks' ledger: %+v", effects)
	}

	if err := os.RemoveAll(filepath.Dir(prog)); err != nil {
		t.Fatal(err)
	}
	d := e.Doctor(e.Project)
	if d.Code != 1 || !d.Has(filepath.Join(filepath.Dir(prog), "agent-rewind-hook")+" does not exist", "agent-rewind setup copilot") {
		t.Errorf("doctor with the installed binaries gone: exit %d, problems %+v", d.Code, d.Problems)
	}
	e.Setup(e.Project, "", "copilot")
	if d := e.Doctor(e.Project); len(d.Of("copilot")) > 0 {
		t.Errorf("doctor after the fix it named: %+v", d.Of("copilot"))
	}
}
