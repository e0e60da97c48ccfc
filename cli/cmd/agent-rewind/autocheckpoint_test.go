package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// End-to-end tests of automatic checkpoints: the plugin's PreToolUse hook command, run as Claude
// Code runs it (one process of the real binary per tool call, Claude Code's hook payloads on
// stdin), checkpoints before each call that can change files; rewind then goes back to "before
// tool call X".

// preToolUse runs the plugin's PreToolUse hook command for input in project.
func preToolUse(t *testing.T, project, input string, env ...string) result {
	t.Helper()
	var args []string
	for _, a := range pluginPreToolUseArgs {
		args = append(args, strings.ReplaceAll(a, "${CLAUDE_PROJECT_DIR}", project))
	}
	return runIn(t, t.TempDir(), append(os.Environ(), env...), input, args...)
}

// timeline is what "list --json" prints, as far as these tests read it.
type timeline struct {
	Current     string
	Checkpoints []struct {
		ID, Kind, Label, Parent string
		Call                    *struct{ ID, Tool, Summary, Session, Agent string }
	}
	Sessions []struct {
		ID, Agent string
		Calls     []struct {
			ID, Tool, Summary, Checkpoint string
			Reused                        bool
		}
	}
}

func listJSON(t *testing.T, project string) timeline {
	t.Helper()
	r := run(t, project, "", "--workspace", project, "--json", "list")
	var tl timeline
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &tl) != nil {
		t.Fatalf("list --json: %+v", r)
	}
	return tl
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestClaudeCodeAutomaticCheckpoints(t *testing.T) {
	project := t.TempDir()
	main := filepath.Join(project, "main.go")
	writeFile(t, main, "v0")
	// A sequence of tool calls: the hook before each, then what the tool does.
	type call struct {
		input string
		do    func()
	}
	session := func(s string) map[string]any { return map[string]any{"session_id": s} }
	edit := func(tool, id, content string) call {
		return call{hookInput(t, "PreToolUse", tool, map[string]any{"file_path": main, "old_string": "x", "new_string": "y"}, id, session("sess-1")),
			func() { writeFile(t, main, content) }}
	}
	calls := []call{
		edit("Write", "toolu_A1", "v1"),
		{bashHook(t, "PreToolUse", "npm install", "toolu_A2"), func() { writeFile(t, filepath.Join(project, "node_modules", "x", "index.js"), "x") }},
		edit("Edit", "toolu_A3", "v2"),
		// Claude Code's own fixture: a call that changes nothing after one that did.
		{clientFixture(t, "claude-code/pretooluse-bash-ls.json", project), func() {}},
		{bashHook(t, "PreToolUse", "rm -rf node_modules", "toolu_A5"), func() { os.RemoveAll(filepath.Join(project, "node_modules")) }},
		// Read cannot change files: no checkpoint, whatever runs the guard for it.
		{hookInput(t, "PreToolUse", "Read", map[string]any{"file_path": main}, "toolu_A6", session("sess-1")), func() {}},
		edit("MultiEdit", "toolu_A7", "v3"),
	}
	for i, c := range calls {
		if r := preToolUse(t, project, c.input); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("call %d: the hook said %+v", i, r)
		}
		c.do()
	}

	tl := listJSON(t, project)
	// A new checkpoint before every call that followed a change; before A5 (after ls changed
	// nothing) the ls checkpoint is reused; the Read has none.
	var autoCalls []string
	for _, c := range tl.Checkpoints {
		if c.Kind != "auto" || c.Call == nil {
			t.Fatalf("checkpoint %+v: want kind auto with its call", c)
		}
		autoCalls = append(autoCalls, c.Call.ID)
	}
	if want := []string{"toolu_A1", "toolu_A2", "toolu_A3", "toolu_01ABC123ls", "toolu_A7"}; !slices.Equal(autoCalls, want) {
		t.Fatalf("automatic checkpoints before %v, want %v", autoCalls, want)
	}
	if c := tl.Checkpoints[1]; c.Label != "Bash: npm install" || c.Call.Summary != "npm install" || c.Call.Agent != "claude-code" || c.Call.Session != "e2e-session" {
		t.Fatalf("checkpoint before npm install: %+v %+v", c, c.Call)
	}
	if c := tl.Checkpoints[0]; c.Call.Tool != "Write" || c.Call.Summary != "main.go" || c.Label != "Write: main.go" {
		t.Fatalf("checkpoint before Write: %+v", c.Call)
	}
	// Grouped by session, in call order: sess-1 (A1, A3, A7), e2e-session (A2, A5), abc123 (ls).
	var groups []string
	for _, s := range tl.Sessions {
		var ids []string
		for _, c := range s.Calls {
			ids = append(ids, c.ID)
		}
		groups = append(groups, s.ID+":"+strings.Join(ids, ","))
	}
	if want := []string{"sess-1:toolu_A1,toolu_A3,toolu_A7", "e2e-session:toolu_A2,toolu_A5", "abc123:toolu_01ABC123ls"}; !slices.Equal(groups, want) {
		t.Fatalf("sessions %v, want %v", groups, want)
	}
	if a5 := tl.Sessions[1].Calls[1]; !a5.Reused || a5.Checkpoint != tl.Checkpoints[3].ID {
		t.Fatalf("A5 after a call that changed nothing: %+v, want the ls checkpoint %s reused", a5, tl.Checkpoints[3].ID)
	}

	// The text list groups calls by session and names the rewind (as docs/agents.md shows it).
	r := run(t, project, "", "list")
	for _, want := range []string{"session sess-1 (claude-code)", "toolu_A2", "npm install", "agent-rewind rewind <tool call id>"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("list lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}

	// Rewind to before npm install: main.go as Write left it, no node_modules.
	if r := run(t, project, "", "--workspace", project, "rewind", "toolu_A2"); r.code != 0 {
		t.Fatalf("rewind toolu_A2: %+v", r)
	}
	if got, nm := readFile(t, main), readFile(t, filepath.Join(project, "node_modules", "x", "index.js")); got != "v1" || nm != "<absent>" {
		t.Fatalf("before npm install: main.go %q, node_modules %q", got, nm)
	}
	// Rewind to before the ls (a checkpoint shared with no other call): v2 and node_modules.
	// As docs/agents.md shows it, run in the project.
	if r := run(t, project, "", "rewind", "toolu_01ABC123ls"); r.code != 0 {
		t.Fatalf("rewind to before ls: %+v", r)
	}
	if got, nm := readFile(t, main), readFile(t, filepath.Join(project, "node_modules", "x", "index.js")); got != "v2" || nm != "x" {
		t.Fatalf("before ls: main.go %q, node_modules %q", got, nm)
	}
	// Before A5, whose checkpoint was the ls one reused: the same state.
	if r := run(t, project, "", "--workspace", project, "rewind", "toolu_A5"); r.code != 0 {
		t.Fatalf("rewind toolu_A5: %+v", r)
	}
	if got, nm := readFile(t, main), readFile(t, filepath.Join(project, "node_modules", "x", "index.js")); got != "v2" || nm != "x" {
		t.Fatalf("before A5: main.go %q, node_modules %q", got, nm)
	}
	// Before A7: what rm -rf left.
	if r := run(t, project, "", "--workspace", project, "rewind", "toolu_A7"); r.code != 0 {
		t.Fatalf("rewind toolu_A7: %+v", r)
	}
	if got, nm := readFile(t, main), readFile(t, filepath.Join(project, "node_modules", "x", "index.js")); got != "v2" || nm != "<absent>" {
		t.Fatalf("before A7: main.go %q, node_modules %q", got, nm)
	}
	if r := run(t, project, "", "--workspace", project, "rewind", "toolu_nope"); r.code != 1 || !strings.Contains(r.stderr, "tool call") {
		t.Fatalf("unknown tool call: %+v", r)
	}
	verifyChain(t, project)
}

// The first automatic checkpoint of a workspace larger than the limit is not taken: the hook
// says so once (Claude Code shows systemMessage), never blocks the call, and .rewindignore or
// the setting opts in.
func TestAutomaticCheckpointSizeLimit(t *testing.T) {
	project := t.TempDir()
	writeFile(t, filepath.Join(project, "data", "big.bin"), strings.Repeat("x", 4096))
	writeFile(t, filepath.Join(project, "main.go"), "package main")
	limit := "REWIND_AUTO_CHECKPOINT_LIMIT=1KiB"
	r := preToolUse(t, project, bashHook(t, "PreToolUse", "make", "toolu_L1"), limit)
	var msg struct{ SystemMessage string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &msg) != nil || !strings.Contains(msg.SystemMessage, "more than 1.00 KiB") ||
		!strings.Contains(msg.SystemMessage, ".rewindignore") || !strings.Contains(msg.SystemMessage, "REWIND_AUTO_CHECKPOINT_LIMIT") || !strings.Contains(r.stderr, msg.SystemMessage) {
		t.Fatalf("over the limit: %+v", r)
	}
	if hasStore(t, project) {
		t.Fatal("a workspace over the limit got a store")
	}
	// Said once.
	if r := preToolUse(t, project, bashHook(t, "PreToolUse", "make", "toolu_L2"), limit); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("second call: %+v", r)
	}
	// An effect is still decided as usual.
	if r := preToolUse(t, project, bashHook(t, "PreToolUse", "git push origin main", "toolu_L3"), limit); r.code != 0 {
		t.Fatalf("effect: %+v", r)
	}
	if n := len(listJSON(t, project).Checkpoints); n != 0 {
		t.Fatalf("%d checkpoints over the limit", n)
	}
	// Opt in by excluding the big folder.
	writeFile(t, filepath.Join(project, ".rewindignore"), "data/\n")
	if r := preToolUse(t, project, bashHook(t, "PreToolUse", "make", "toolu_L4"), limit); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("after .rewindignore: %+v", r)
	}
	if tl := listJSON(t, project); len(tl.Checkpoints) != 1 || tl.Checkpoints[0].Call.ID != "toolu_L4" {
		t.Fatalf("after .rewindignore: %+v", tl)
	}

	// off: no automatic checkpoints at all; a bad setting is said once and blocks nothing.
	other := t.TempDir()
	if r := preToolUse(t, other, bashHook(t, "PreToolUse", "make", "toolu_O1"), "REWIND_AUTO_CHECKPOINT_LIMIT=off"); r.code != 0 || r.stdout != "" || r.stderr != "" || hasStore(t, other) {
		t.Fatalf("off: %+v", r)
	}
	if r := preToolUse(t, other, bashHook(t, "PreToolUse", "make", "toolu_O2"), "REWIND_AUTO_CHECKPOINT_LIMIT=lots"); r.code != 0 || !strings.Contains(r.stderr, `"lots"`) || hasStore(t, other) {
		t.Fatalf("bad setting: %+v", r)
	}
	// Raising the limit opts in.
	if r := preToolUse(t, project, bashHook(t, "PreToolUse", "make", "toolu_R1"), "REWIND_AUTO_CHECKPOINT_LIMIT=1GB"); r.code != 0 || r.stderr != "" {
		t.Fatalf("1GB: %+v", r)
	}
}

// An agent started in the home folder gets no automatic checkpoints, is told once, and is not
// blocked.
func TestAutomaticCheckpointHomeRefused(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home}
	r := preToolUse(t, home, bashHook(t, "PreToolUse", "make", "toolu_H1"), env...)
	if r.code != 0 || !strings.Contains(r.stderr, "the home folder") || !strings.Contains(r.stdout, "systemMessage") {
		t.Fatalf("home: %+v", r)
	}
	if r := preToolUse(t, home, bashHook(t, "PreToolUse", "make", "toolu_H2"), env...); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("home, second call: %+v", r)
	}
	if hasStore(t, home) {
		t.Fatal("the home folder got a store")
	}
}

// Codex, Cursor, VS Code and Cline's CLI send a tool call id with their "before a tool call"
// hook: the hook their integration file configures takes the automatic checkpoint, labelled
// with the call, and rewind finds it by that id. Gemini CLI sends none, but one BeforeTool per
// call: agent-rewind names it (gemini-cli_ and 16 hex digits). Copilot, Cline's extension and
// Windsurf send none: their hooks take no automatic checkpoint (docs/agents.md).
func TestIntegrationAutomaticCheckpoints(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		client, hooks, event, fixture string
		callID, tool, summary         string
	}{
		{"codex", "codex/.codex/hooks.json", "PreToolUse", "codex/pretooluse-apply-patch.json", "call_Ap9Lm2Qw7Zx4Vb1N", "apply_patch", "README.md"},
		{"codex bash", "codex/.codex/hooks.json", "PreToolUse", "codex/pretooluse-bash-npm-publish.json", "call_Hx3k9PqL2mVn8RtY", "Bash", "npm publish"},
		{"cursor", "cursor/.cursor/hooks.json", "preToolUse", "cursor/pretooluse-shell-git-push.json", "", "Shell", "git push origin main"},
		{"vscode", "vscode/.github/hooks/agent-rewind.json", "PreToolUse", "vscode/pretooluse-run-in-terminal-git-push.json", "", "run_in_terminal", "git push origin main"},
		// Cline's CLI (payloads captured from 3.0.65): its PreToolUse script, by tool_call.id.
		{"cline editor", "", "PreToolUse", "cline/real-3.0.65-tool_call-editor.json", "call_mock2", "editor", "c.txt"},
		{"cline run_commands", "", "PreToolUse", "cline/real-3.0.65-tool_call-run_commands-git-push.json", "call_mock1", "run_commands", "git push origin main"},
		{"gemini-cli shell", "gemini-cli/.gemini/settings.json", "BeforeTool", "gemini-cli/beforetool-shell-git-push.json", "gemini-cli_", "run_shell_command", "git push origin main"},
		{"gemini-cli write_file", "gemini-cli/.gemini/settings.json", "BeforeTool", "gemini-cli/real-0.61.0-beforetool-write-file.json", "gemini-cli_", "write_file", "c.txt"},
	} {
		t.Run(c.client, func(t *testing.T) {
			var h hookRun
			if c.hooks == "" {
				h = clineHook(c.event)(t)
			} else {
				cmds := hookCommands(t, c.hooks, c.event)
				if len(cmds) != 1 || !strings.HasSuffix(cmds[0], " --checkpoint") {
					t.Fatalf("%s %s: %q, want one guard --checkpoint", c.hooks, c.event, cmds)
				}
				h = hookRun{shell: cmds[0]}
			}
			project := filepath.Join(t.TempDir(), "my project")
			writeFile(t, filepath.Join(project, "README.md"), "v0")
			env := envWithout([]string{"HOME", "CLAUDE_PROJECT_DIR", "PATH"}, "HOME="+home)
			in := clientFixture(t, c.fixture, project)
			var m map[string]any
			json.Unmarshal([]byte(in), &m)
			id := c.callID
			if id == "" {
				id, _ = m["tool_use_id"].(string)
			}
			if r := h.run(t, t.TempDir(), env, in); r.code != 0 || r.stderr != "" {
				t.Fatalf("hook: %+v", r)
			}
			writeFile(t, filepath.Join(project, "README.md"), "v1")
			tl := listJSON(t, project)
			if len(tl.Checkpoints) != 1 || tl.Checkpoints[0].Call == nil {
				t.Fatalf("checkpoints: %+v", tl.Checkpoints)
			}
			if named, ok := strings.CutPrefix(tl.Checkpoints[0].Call.ID, "gemini-cli_"); ok && id == "gemini-cli_" && len(named) == 16 {
				id = tl.Checkpoints[0].Call.ID // named by agent-rewind
			}
			if call := tl.Checkpoints[0].Call; call.ID != id || call.Tool != c.tool || !strings.HasPrefix(call.Summary, c.summary) {
				t.Fatalf("call %+v, want id %s tool %s summary %q", call, id, c.tool, c.summary)
			}
			if r := run(t, project, "", "--workspace", project, "rewind", id); r.code != 0 || readFile(t, filepath.Join(project, "README.md")) != "v0" {
				t.Fatalf("rewind %s: %+v", id, r)
			}
		})
	}
	for _, fixture := range []string{"windsurf/pre-run-command-ls.json", "cline/pretooluse-execute-command-git-push.json", "cursor/beforeshellexecution-ls.json",
		"copilot/pretooluse-write.json", "copilot/pretooluse-bash-git-push.json"} {
		project := t.TempDir()
		writeFile(t, filepath.Join(project, "README.md"), "v0")
		if r := run(t, t.TempDir(), clientFixture(t, fixture, project), "--workspace", project, "guard", "--checkpoint"); r.code != 0 || r.stderr != "" {
			t.Fatalf("%s: %+v", fixture, r)
		}
		if !hasStore(t, project) {
			continue // a call that is not an effect: nothing recorded
		}
		if tl := listJSON(t, project); len(tl.Checkpoints) != 0 {
			t.Fatalf("%s names no tool call, yet: %+v", fixture, tl.Checkpoints)
		}
	}
}

// The MCP server's list and backtrack_candidates show the automatic checkpoints by tool call
// and session, and its rewind accepts a tool call id.
func TestMCPAutomaticCheckpoints(t *testing.T) {
	project := t.TempDir()
	main := filepath.Join(project, "main.go")
	writeFile(t, main, "v0")
	for i, cmd := range []string{"go generate", "npm install", "make"} {
		id := "toolu_M" + string(rune('1'+i))
		if r := preToolUse(t, project, bashHook(t, "PreToolUse", cmd, id)); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("%s: %+v", id, r)
		}
		writeFile(t, main, "v"+string(rune('1'+i)))
	}
	cs := startMCP(t, project, os.Environ(), "--workspace", project)
	list := callTool(t, cs, "list", nil)
	text := resultText(list)
	for _, want := range []string{`Tool calls of session "e2e-session"`, `toolu_M2 "Bash: npm install"`} {
		if !strings.Contains(text, want) {
			t.Fatalf("list text lacks %q:\n%s", want, text)
		}
	}
	// The calls are in the structured result, which is what Claude Code and Codex hand the
	// model, and in the text: newest first, each with the checkpoint before it.
	type listResult struct {
		Entries  []struct{ ID, Kind string }
		Sessions []struct {
			ID    string
			Calls []struct{ ID, Label, Before string }
		}
		Next string
	}
	lr := mcpOK[listResult](t, cs, "list", nil)
	if len(lr.Entries) != 3 || lr.Entries[0].Kind != "auto" {
		t.Fatalf("list: %+v", lr)
	}
	if len(lr.Sessions) != 1 || lr.Sessions[0].ID != "e2e-session" || len(lr.Sessions[0].Calls) != 3 {
		t.Fatalf("list sessions: %+v", lr.Sessions)
	}
	if c := lr.Sessions[0].Calls; c[0].ID != "toolu_M3" || c[1].ID != "toolu_M2" || c[1].Label != "Bash: npm install" || c[1].Before != lr.Entries[1].ID || !strings.Contains(lr.Next, "call's id") {
		t.Fatalf("list calls: %+v, next %q", c, lr.Next)
	}
	m3, m2 := strings.Index(text, "- toolu_M3"), strings.Index(text, "- toolu_M2")
	if m3 < 0 || m2 < m3 || !strings.Contains(text, "(before: "+lr.Entries[1].ID+")") {
		t.Fatalf("list text does not list the calls newest first with their checkpoints:\n%s", text)
	}
	type candidates struct {
		Candidates []struct{ ID, Call string }
	}
	if c := mcpOK[candidates](t, cs, "backtrack_candidates", nil); len(c.Candidates) != 3 || c.Candidates[0].Call != "toolu_M3" {
		t.Fatalf("candidates: %+v", c)
	}
	mcpOK[map[string]any](t, cs, "rewind", map[string]any{"id": "toolu_M2"})
	if got := readFile(t, main); got != "v1" {
		t.Fatalf("before toolu_M2 main.go was v1, now %q", got)
	}
}

// gc prunes automatic checkpoints by their own rule (per session), shows what it would drop,
// and keeps every checkpoint taken on request.
func TestGCAutomaticCheckpoints(t *testing.T) {
	project := t.TempDir()
	main := filepath.Join(project, "main.go")
	writeFile(t, main, "v0")
	if r := run(t, project, "", "--workspace", project, "checkpoint", "mine"); r.code != 0 {
		t.Fatalf("checkpoint: %+v", r)
	}
	for i := range 4 {
		writeFile(t, main, "v"+string(rune('1'+i)))
		if r := preToolUse(t, project, bashHook(t, "PreToolUse", "make", "toolu_G"+string(rune('1'+i)))); r.code != 0 || r.stderr != "" {
			t.Fatalf("hook: %+v", r)
		}
	}
	tl := listJSON(t, project)
	type gcOut struct {
		DryRun  bool
		Removed []string
		Kept    int
	}
	gc := func(args ...string) gcOut {
		t.Helper()
		r := run(t, project, "", append([]string{"--workspace", project, "--json", "gc"}, args...)...)
		var out gcOut
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
			t.Fatalf("gc %v: %+v", args, r)
		}
		return out
	}
	// As docs/agents.md shows it; the defaults (the newest 100 of a session, and a week) keep
	// them all.
	if r := run(t, project, "", "gc", "--dry-run"); r.code != 0 || !strings.Contains(r.stdout, "would remove 0 checkpoints") || !strings.Contains(r.stdout, "newest 100 of each agent session") {
		t.Fatalf("gc --dry-run: %+v", r)
	}
	if out := gc("--dry-run"); len(out.Removed) != 0 || out.Kept != 5 {
		t.Fatalf("gc --dry-run with the defaults: %+v", out)
	}
	want := []string{tl.Checkpoints[1].ID, tl.Checkpoints[2].ID}
	if out := gc("--dry-run", "--auto-keep-last", "2", "--auto-keep-within", "0"); !out.DryRun || !slices.Equal(out.Removed, want) {
		t.Fatalf("dry run: %+v, want %v removed", out, want)
	}
	r := run(t, project, "", "--workspace", project, "gc", "--dry-run", "--auto-keep-last", "2", "--auto-keep-within", "0")
	if !strings.Contains(r.stdout, "would remove 2 checkpoints") || !strings.Contains(r.stdout, "Bash: make") {
		t.Fatalf("gc --dry-run text: %+v", r)
	}
	if out := gc("--auto-keep-last", "2", "--auto-keep-within", "0"); !slices.Equal(out.Removed, want) || out.Kept != 3 {
		t.Fatalf("gc: %+v", out)
	}
	if tl := listJSON(t, project); tl.Checkpoints[0].Label != "mine" || len(tl.Sessions) != 1 || len(tl.Sessions[0].Calls) != 2 {
		t.Fatalf("after gc: %+v", tl)
	}
	if r := run(t, project, "", "--workspace", project, "rewind", "toolu_G1"); r.code != 1 || !strings.Contains(r.stderr, "tool call") {
		t.Fatalf("rewind to a call gc removed: %+v", r)
	}
	verifyChain(t, project)
}

// A large first checkpoint is not taken inside the hook, whose timeout would block the call:
// the hook starts it in a process of its own, says so once, and returns; later calls skip
// quietly while it runs, and get automatic checkpoints once it is done.
func TestAutomaticCheckpointLargeFirstInBackground(t *testing.T) {
	project := t.TempDir()
	big, err := os.Create(filepath.Join(project, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(100 << 20); err != nil { // sparse: large, cheap to write and read
		t.Fatal(err)
	}
	big.Close()
	r := preToolUse(t, project, bashHook(t, "PreToolUse", "make", "toolu_B1"))
	if r.code != 0 || !strings.Contains(r.stdout, "in the background") || !strings.Contains(r.stderr, "in the background") {
		t.Fatalf("first call: %+v", r)
	}
	// Wait for the background checkpoint (a bound for a stuck process, not a timing assertion).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if hasStore(t, project) {
			if tl := listJSON(t, project); len(tl.Checkpoints) == 1 {
				if tl.Checkpoints[0].Label != "first automatic checkpoint" || tl.Checkpoints[0].Kind != "normal" {
					t.Fatalf("background checkpoint: %+v", tl.Checkpoints[0])
				}
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the background checkpoint did not finish")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its lock released, the next call gets its automatic checkpoint (reusing the position).
	for {
		r := preToolUse(t, project, bashHook(t, "PreToolUse", "make", "toolu_B2"))
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("second call: %+v", r)
		}
		if r.stderr == "" {
			break
		}
		if !strings.Contains(r.stderr, "busy") || time.Now().After(deadline) {
			t.Fatalf("second call: %+v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	tl := listJSON(t, project)
	if len(tl.Checkpoints) != 1 || len(tl.Sessions) != 1 || tl.Sessions[0].Calls[0].ID != "toolu_B2" || !tl.Sessions[0].Calls[0].Reused {
		t.Fatalf("after the background checkpoint: %+v", tl)
	}
}
