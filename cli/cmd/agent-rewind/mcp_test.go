package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpEnv is this process's environment without a REWIND_MCP_PROFILE of the developer's, plus
// extra.
func mcpEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, mcpserver.EnvProfile+"=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// startMCP starts "agent-rewind mcp args..." in dir and connects the Go SDK's client to it over
// CommandTransport. Calls are synchronous, so stdin stays open until each reply has arrived
// (go-sdk issue #1061); the test's cleanup closes the session, which closes stdin and requires
// the server to exit 0.
func startMCP(t *testing.T, dir string, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a bound for a hung child, not a timing assertion
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent-rewind-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Minute}, nil)
	if err != nil {
		t.Fatalf("connect to agent-rewind mcp %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			if err := cs.Close(); err != nil {
				t.Errorf("agent-rewind mcp %v did not exit cleanly when stdin closed: %v\nstderr:\n%s", args, err, stderr.String())
			}
		}
	})
	return cs
}

// callTool calls a tool and returns its result; a protocol error fails the test.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a bound for a hung server, not a timing assertion
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

// mcpOK calls a tool that must succeed and decodes its structured result into a T.
func mcpOK[T any](t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error: %s", name, args, resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	return v
}

// mcpToolError calls a tool that must fail with a tool error and returns its text.
func mcpToolError(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s %v succeeded, want a tool error: %s", name, args, resultText(res))
	}
	return resultText(res)
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// sh runs a shell script in dir: the changes an agent makes without the server.
func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -c %q: %v\n%s", script, err, out)
	}
}

func fileText(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func isThere(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

func mustVerifyChain(t *testing.T, dir string) {
	t.Helper()
	if r := run(t, dir, "", "chain", "verify"); r.code != 0 || !strings.HasPrefix(r.stdout, "ok: ") {
		t.Fatalf("chain verify: code %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestMCPEndToEnd drives the real binary with the Go SDK's client through the whole workflow:
// checkpoint, a change made with the shell, rewind and replay, the effect barrier, failure
// memory across rewinds, a second server process, and the chain at the end.
func TestMCPEndToEnd(t *testing.T) {
	dir := t.TempDir()
	sh(t, dir, "printf 'v1\\n' > app.txt && mkdir src && printf 'package src\\n' > src/a.go")
	cs := startMCP(t, dir, mcpEnv())

	// Reads on a fresh folder answer with nothing and create nothing.
	if l := mcpOK[mcpserver.ListResult](t, cs, "list", nil); len(l.Entries) != 0 {
		t.Fatalf("list of a fresh folder: %+v", l)
	}
	if c := mcpOK[mcpserver.CandidatesResult](t, cs, "backtrack_candidates", nil); len(c.Candidates) != 0 {
		t.Fatalf("candidates of a fresh folder: %+v", c)
	}
	if s := mcpOK[mcpserver.SavingsResult](t, cs, "savings", nil); s.ReplayedCalls != 0 || !strings.Contains(s.Note, "gateway has not replayed") {
		t.Fatalf("savings: %+v", s)
	}
	if text := mcpToolError(t, cs, "rewind", map[string]any{"id": "0123456789ab"}); !strings.Contains(text, "no checkpoints yet") {
		t.Fatalf("rewind in a fresh folder: %s", text)
	}
	if hasStore(t, dir) {
		t.Fatal("a store was created before any tool wrote")
	}

	// Checkpoint, change files with the shell, rewind: the files are back.
	cp := mcpOK[mcpserver.CheckpointResult](t, cs, "checkpoint", map[string]any{"label": "green"})
	if len(cp.ID) != 12 || cp.Label != "green" || cp.Files != 2 || !isThere(stateDir(t, dir), "checkpoints/"+cp.ID) {
		t.Fatalf("checkpoint: %+v", cp)
	}
	sh(t, dir, "printf 'v2\\n' > app.txt && rm src/a.go && printf 'junk' > junk.txt")
	rw := mcpOK[mcpserver.RestoreResult](t, cs, "rewind", map[string]any{"id": cp.ID})
	if rw.ID != cp.ID || rw.SafetyID == "" || rw.Added != 1 || rw.Modified != 1 || rw.Deleted != 1 {
		t.Fatalf("rewind: %+v", rw)
	}
	if fileText(t, dir, "app.txt") != "v1\n" || fileText(t, dir, "src/a.go") != "package src\n" || isThere(dir, "junk.txt") {
		t.Fatal("rewind did not restore the shell's changes")
	}
	rp := mcpOK[mcpserver.RestoreResult](t, cs, "replay", map[string]any{"id": rw.SafetyID})
	if rp.ID != rw.SafetyID || fileText(t, dir, "app.txt") != "v2\n" || !isThere(dir, "junk.txt") {
		t.Fatalf("replay: %+v", rp)
	}
	mcpOK[mcpserver.RestoreResult](t, cs, "rewind", map[string]any{"id": cp.ID})
	if text := mcpToolError(t, cs, "rewind", map[string]any{"id": "ffffffffffff"}); !strings.Contains(text, "no such checkpoint") || !strings.Contains(text, "Use an id that checkpoint returned") {
		t.Fatalf("rewind to an unknown id: %s", text)
	}

	// One key, twice: the second is refused with the barrier's reason.
	effect := map[string]any{"key": "deploy:prod:42", "payload": map[string]any{"version": 42}, "description": "deploy v42"}
	g1 := mcpOK[mcpserver.GuardResult](t, cs, "guard_effect", effect)
	if !g1.Admitted || g1.Code != "admitted" || g1.Key != "deploy:prod:42" {
		t.Fatalf("first guard: %+v", g1)
	}
	res := callTool(t, cs, "guard_effect", effect)
	var g2 mcpserver.GuardResult
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &g2)
	if res.IsError || g2.Admitted || g2.Code != "spent" || g2.Reason == "" || !strings.HasPrefix(resultText(res), "REFUSED (spent)") {
		t.Fatalf("second guard: isError %v, %+v, %q", res.IsError, g2, resultText(res))
	}

	// Another server process on the same workspace: its checkpoint is seen here at once, and
	// the key is spent for it too.
	sh(t, dir, "printf 'other\\n' > other.txt")
	other := startMCP(t, dir, mcpEnv())
	ocp := mcpOK[mcpserver.CheckpointResult](t, other, "checkpoint", map[string]any{"label": "from another process"})
	if g := mcpOK[mcpserver.GuardResult](t, other, "guard_effect", effect); g.Admitted {
		t.Fatalf("guard in the other process: %+v", g)
	}
	l := mcpOK[mcpserver.ListResult](t, cs, "list", nil)
	if len(l.Entries) == 0 || l.Entries[0].ID != ocp.ID || l.Current != ocp.ID {
		t.Fatalf("list after the other process's checkpoint: %+v", l)
	}

	// Failure memory: commit a note, go back; the note is there, and survives a later rewind.
	sh(t, dir, "printf 'v3 broken\\n' > app.txt")
	commit := mcpOK[mcpserver.BacktrackResult](t, cs, "backtrack_commit", map[string]any{"id": cp.ID, "what_failed": "v3 broke the build", "lesson": "run the tests before v3"})
	if commit.Rewind.ID != cp.ID || fileText(t, dir, "app.txt") != "v1\n" || isThere(dir, "other.txt") {
		t.Fatalf("backtrack_commit did not rewind: %+v", commit.Rewind)
	}
	if len(commit.Notes) != 1 || commit.Notes[0].WhatFailed != "v3 broke the build" || commit.Notes[0].Lesson != "run the tests before v3" {
		t.Fatalf("backtrack_commit notes: %+v", commit.Notes)
	}
	memory := fileText(t, stateDir(t, dir), "memory.jsonl")
	if text := mcpToolError(t, cs, "backtrack_commit", map[string]any{"id": "ffffffffffff", "what_failed": "x"}); !strings.Contains(text, "no such checkpoint") {
		t.Fatalf("backtrack_commit to an unknown id: %s", text)
	}
	if fileText(t, stateDir(t, dir), "memory.jsonl") != memory {
		t.Fatal("a backtrack_commit to an unknown id wrote a note")
	}
	noteOf := func(c mcpserver.CandidatesResult) *mcpserver.Candidate {
		for i := range c.Candidates {
			if c.Candidates[i].ID == cp.ID {
				return &c.Candidates[i]
			}
		}
		return nil
	}
	cands := mcpOK[mcpserver.CandidatesResult](t, cs, "backtrack_candidates", nil)
	if c := noteOf(cands); c == nil || len(c.Notes) != 1 || c.Notes[0].WhatFailed != "v3 broke the build" || c.Label != "green" {
		t.Fatalf("backtrack_candidates after the commit: %+v", cands)
	}
	mcpOK[mcpserver.RestoreResult](t, other, "rewind", map[string]any{"id": ocp.ID})
	if fileText(t, dir, "other.txt") != "other\n" {
		t.Fatal("rewind from the other process")
	}
	cands = mcpOK[mcpserver.CandidatesResult](t, cs, "backtrack_candidates", nil)
	if c := noteOf(cands); c == nil || len(c.Notes) != 1 || c.Changed == 0 {
		t.Fatalf("the note did not survive a rewind: %+v", cands)
	}

	// The chain holds all of it, and verifies.
	got := kinds(readChain(t, dir))
	for _, k := range []string{"checkpoint", "rewind", "replay", "effect", "refusal", "memory"} {
		if got[k] == 0 {
			t.Errorf("no %q entry on the chain: %v", k, got)
		}
	}
	if got["memory"] != 1 || got["effect"] != 1 || got["refusal"] != 2 {
		t.Errorf("chain kinds %v", got)
	}
	mustVerifyChain(t, dir)
}

// TestMCPProfiles: each profile lists exactly its tools, a hidden tool cannot be called (and
// does not run), and the flag beats REWIND_MCP_PROFILE.
func TestMCPProfiles(t *testing.T) {
	hidden := map[mcpserver.Profile]string{
		mcpserver.ProfileLean:      "backtrack_commit",
		mcpserver.ProfileRecovery:  "savings",
		mcpserver.ProfileAnalytics: "checkpoint",
	}
	for _, p := range mcpserver.Profiles() {
		t.Run(string(p), func(t *testing.T) {
			dir := t.TempDir()
			cs := startMCP(t, dir, mcpEnv(mcpserver.EnvProfile+"=analytics"), "--profile", string(p))
			var names []string
			for tool, err := range cs.Tools(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			want := p.Tools()
			slices.Sort(names)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			if name, ok := hidden[p]; ok {
				_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"id": "0123456789ab", "what_failed": "x"}})
				if err == nil || !strings.Contains(err.Error(), "not enabled in MCP profile") {
					t.Fatalf("calling hidden %s: %v", name, err)
				}
				if p == mcpserver.ProfileAnalytics && hasStore(t, dir) {
					t.Fatal("the hidden checkpoint ran")
				}
			}
		})
	}
	t.Run("environment", func(t *testing.T) {
		cs := startMCP(t, t.TempDir(), mcpEnv(mcpserver.EnvProfile+"=lean"))
		if got := cs.InitializeResult().Instructions; got != mcpserver.Instructions(mcpserver.ProfileLean) {
			t.Fatalf("REWIND_MCP_PROFILE=lean: instructions %q", got)
		}
	})
}

// TestMCPStartupFailures: a bad profile, option or workspace stops the server before any
// protocol traffic: exit 1, the reason on stderr, nothing on stdout, though a request waits.
func TestMCPStartupFailures(t *testing.T) {
	dir := t.TempDir()
	sh(t, dir, "printf x > file")
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n"
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"mcp", "--profile", "max"}, `--profile: unknown MCP profile "max": use one of lean, recovery, analytics, all`},
		{[]string{mcpserver.EnvProfile + "=bogus"}, []string{"mcp"}, `REWIND_MCP_PROFILE: unknown MCP profile "bogus"`},
		{nil, []string{"mcp", "--bogus"}, "agent-rewind mcp: unknown flag --bogus"},
		{nil, []string{"mcp", "--profile"}, "agent-rewind mcp: "},
		{nil, []string{"mcp", "extra"}, "agent-rewind mcp: unexpected argument extra"},
		{nil, []string{"--json", "--workspace", filepath.Join(dir, "file"), "mcp"}, "is not a directory"},
		{nil, []string{"--workspace", filepath.Join(dir, "missing"), "mcp"}, "no such file or directory"},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Dir = dir
		cmd.Env = mcpEnv(c.env...)
		cmd.Stdin = strings.NewReader(initialize)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
			t.Errorf("%v %v: %v, want exit status 1 (stderr %q)", c.env, c.args, err, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("%v %v: wrote to stdout: %q", c.env, c.args, stdout.String())
		}
		if !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v %v: stderr %q, want %q", c.env, c.args, stderr.String(), c.want)
		}
	}
	if hasStore(t, dir) {
		t.Fatal("a failed start created a store")
	}
	// --help is help, not a failure.
	if r := run(t, dir, "", "mcp", "--help"); r.code != 0 || !strings.Contains(r.stdout, "--profile") {
		t.Fatalf("mcp --help: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestMCPTypeScriptClient runs the official TypeScript SDK's client (mcpserver's
// testdata/tsclient/client.mjs, pinned by its package-lock.json) against the real binary: a
// client nobody here wrote, which also validates each structured result against its tool's
// output schema. It needs node and `npm ci --prefix mcpserver/testdata/tsclient`; it skips
// without them unless REWIND_CI=1.
func TestMCPTypeScriptClient(t *testing.T) {
	tsClientReady(t)
	// A repository, and a session started in its (empty) subfolder web/: the plugin's hook and
	// the server both protect the repository.
	dir := t.TempDir()
	sh(t, dir, "printf 'hello\\n' > readme.txt && mkdir .git web")
	web := filepath.Join(dir, "web")
	// The plugin's hook takes an automatic checkpoint before a call that then changes the file.
	if r := preToolUse(t, web, bashHook(t, "PreToolUse", "npm install", "toolu_TS1")); r.code != 0 {
		t.Fatalf("PreToolUse: %+v", r)
	}
	sh(t, dir, "printf 'changed\\n' > readme.txt")
	stdout := tsClient(t, "--cwd", web, "--key", "deploy:ts:1", "--label", "from node", "--rewind", "toolu_TS1")
	var report struct {
		Server       struct{ Name string }
		Instructions string
		Tools        []struct {
			Name            string
			HasOutputSchema bool
		}
		Checkpoint toolResult
		Guard      [2]toolResult
		List       toolResult
		Rewind     toolResult
	}
	if err := json.Unmarshal(stdout, &report); err != nil {
		t.Fatalf("client.mjs report: %v\n%s", err, stdout)
	}
	var names []string
	for _, tool := range report.Tools {
		names = append(names, tool.Name)
		if !tool.HasOutputSchema {
			t.Errorf("tool %s has no output schema", tool.Name)
		}
	}
	slices.Sort(names)
	want := mcpserver.ProfileAll.Tools()
	slices.Sort(want)
	if report.Server.Name != mcpserver.ServerName || !slices.Equal(names, want) || report.Instructions != mcpserver.Instructions(mcpserver.ProfileAll) {
		t.Fatalf("server %+v, tools %v", report.Server, names)
	}
	var cp mcpserver.CheckpointResult
	root, _ := filepath.EvalSymlinks(dir)
	if report.Checkpoint.IsError || json.Unmarshal(report.Checkpoint.StructuredContent, &cp) != nil || cp.Label != "from node" || cp.Files != 1 ||
		cp.Workspace != root || cp.Next != "rewind "+cp.ID+" restores this state" {
		t.Fatalf("checkpoint: %+v", report.Checkpoint)
	}
	if !isThere(stateDir(t, dir), "checkpoints/"+cp.ID) || !strings.Contains(report.Checkpoint.Text, cp.ID) {
		t.Fatalf("checkpoint %s is not in the workspace's store", cp.ID)
	}
	var g1, g2 mcpserver.GuardResult
	if report.Guard[0].IsError || json.Unmarshal(report.Guard[0].StructuredContent, &g1) != nil || !g1.Admitted {
		t.Fatalf("first guard: %+v", report.Guard[0])
	}
	if report.Guard[1].IsError || json.Unmarshal(report.Guard[1].StructuredContent, &g2) != nil || g2.Admitted || g2.Code != "spent" || !strings.Contains(report.Guard[1].Text, "REFUSED") {
		t.Fatalf("second guard: %+v", report.Guard[1])
	}
	// What the model reads from list: the hook's tool call, by session, with its label and the
	// checkpoint before it; rewind takes the call's id.
	var ls mcpserver.ListResult
	if report.List.IsError || json.Unmarshal(report.List.StructuredContent, &ls) != nil || len(ls.Sessions) != 1 || len(ls.Sessions[0].Calls) != 1 {
		t.Fatalf("list: %+v", report.List)
	}
	call := ls.Sessions[0].Calls[0]
	if call.ID != "toolu_TS1" || call.Label != "Bash: npm install" || call.Checkpoint == "" || !strings.Contains(ls.Next, "call's id") {
		t.Fatalf("list's call %+v, next %q", call, ls.Next)
	}
	var rw mcpserver.RestoreResult
	if report.Rewind.IsError || json.Unmarshal(report.Rewind.StructuredContent, &rw) != nil || rw.ID != call.Checkpoint || rw.Next != "rewind "+rw.SafetyID+" undoes this" {
		t.Fatalf("rewind toolu_TS1: %+v", report.Rewind)
	}
	if got := readFile(t, filepath.Join(dir, "readme.txt")); got != "hello\n" {
		t.Fatalf("after rewind toolu_TS1 readme.txt is %q", got)
	}
	// Two checkpoints: the hook's and checkpoint's; the rewind's safety checkpoint is the latter
	// (nothing changed since).
	if got := kinds(readChain(t, dir)); got["checkpoint"] != 2 || got["effect"] != 1 || got["refusal"] != 1 || got["rewind"] != 1 {
		t.Fatalf("chain kinds %v", got)
	}
	mustVerifyChain(t, dir)
}

// tsClientDir is mcpserver's testdata/tsclient: a client on the official TypeScript SDK.
var tsClientDir = filepath.Join("..", "..", "..", "mcpserver", "testdata", "tsclient")

// tsClientReady skips without node or the SDK (fails under REWIND_CI=1).
func tsClientReady(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node: "+err.Error())
	}
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing(t, "the TypeScript SDK (run: npm ci --prefix mcpserver/testdata/tsclient): "+err.Error())
	}
	return node
}

// tsClient runs client.mjs with args against "agent-rewind mcp" and returns its JSON report.
func tsClient(t *testing.T, args ...string) []byte {
	t.Helper()
	node := tsClientReady(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a bound for a hung child, not a timing assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append(append([]string{filepath.Join(tsClientDir, "client.mjs")}, args...), "--", bin, "mcp")...)
	cmd.Env = mcpEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	return stdout.Bytes()
}

// toolResult is a tool's result as client.mjs reports it.
type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Text              string          `json:"text"`
}

// missing skips for a missing outside tool, or fails under REWIND_CI=1, where .ci/run must have
// installed it.
func missing(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("REWIND_CI") == "1" {
		t.Fatalf("%s is missing (REWIND_CI=1: .ci/run must install it)", what)
	}
	t.Skip(what + " is missing")
}
