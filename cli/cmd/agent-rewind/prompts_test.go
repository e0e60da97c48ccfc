package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/mcpserver"
)

// promptHook is Claude Code's UserPromptSubmit hook input.
func promptHook(t *testing.T, session, prompt string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"session_id": session, "transcript_path": "/tmp/e2e/t.jsonl", "cwd": "/tmp/e2e",
		"permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPromptsGroupCalls: the plugin's UserPromptSubmit hook (through agent-rewind-hook and the
// guard server, and through agent-rewind guard) logs each prompt, redacted, and never says
// anything on stdout (Claude Code would add it to the model's context); list groups the
// automatic checkpoints by prompt, and rewind prompt:N goes back to before prompt N's work.
func TestPromptsGroupCalls(t *testing.T) {
	project := t.TempDir()
	app := filepath.Join(project, "app.txt")
	writeFile(t, app, "v0")
	prompt := func(exe, text string) {
		t.Helper()
		if r := runBin(t, exe, t.TempDir(), promptHook(t, "sess-p", text), "--workspace", project, "guard"); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("the prompt hook (%s) said %+v", filepath.Base(exe), r)
		}
	}
	call := func(id, content string) {
		t.Helper()
		in := hookInput(t, "PreToolUse", "Write", map[string]any{"file_path": app, "content": content}, id, map[string]any{"session_id": "sess-p"})
		if r := preToolUse(t, project, in); r.code != 0 {
			t.Fatalf("hook before %s: %+v", id, r)
		}
		writeFile(t, app, content)
	}
	prompt(hookBin, "Add a login page, token sk-ant-api03-abcdefghijklmnop")
	call("toolu_p1", "v1")
	call("toolu_p2", "v2")
	prompt(bin, "Now   the logout\npage")
	call("toolu_p3", "v3")

	var l struct {
		Prompts []struct {
			Session string
			Groups  []struct {
				N      int
				Prompt *struct{ Text, Agent string }
				Calls  []struct{ ID string }
			}
		}
	}
	r := run(t, project, "", "--workspace", project, "--json", "list")
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &l) != nil || len(l.Prompts) != 1 || len(l.Prompts[0].Groups) != 2 {
		t.Fatalf("list --json: %+v\n%s", l, r.stdout)
	}
	g := l.Prompts[0].Groups
	if g[0].N != 1 || len(g[0].Calls) != 2 || g[1].N != 2 || len(g[1].Calls) != 1 || g[1].Calls[0].ID != "toolu_p3" {
		t.Errorf("groups %+v, want prompt 1 with p1 and p2, prompt 2 with p3", g)
	}
	if txt := g[0].Prompt.Text; strings.Contains(txt, "abcdefghijklmnop") || !strings.Contains(txt, "***") || g[0].Prompt.Agent != "claude-code" {
		t.Errorf("prompt 1 logged as %+v: want it redacted, from claude-code", g[0].Prompt)
	}
	if txt := g[1].Prompt.Text; txt != "Now the logout page" {
		t.Errorf("prompt 2 logged as %q, want its words joined by single spaces", txt)
	}
	if b, _ := os.ReadFile(filepath.Join(stateDir(t, project), "prompts.jsonl")); strings.Contains(string(b), "abcdefghijklmnop") {
		t.Errorf("the secret reached the store: %s", b)
	}
	text := run(t, project, "", "--workspace", project, "list")
	if !strings.Contains(text.stdout, `prompt 2 "Now the logout page" → 1 tool call (agent-rewind rewind prompt:2)`) {
		t.Errorf("list does not group by prompt:\n%s", text.stdout)
	}

	if r := run(t, project, "", "--workspace", project, "rewind", "prompt:2"); r.code != 0 || readFile(t, app) != "v2" {
		t.Errorf("rewind prompt:2: %+v, app.txt %q; want v2, the state before prompt 2's work", r, readFile(t, app))
	}
	if r := run(t, project, "", "--workspace", project, "rewind", "prompt:3"); r.code != 1 || !strings.Contains(r.stderr, "no prompt 3") {
		t.Errorf("rewind prompt:3: %+v", r)
	}

	// The store with a prompt log and a conversation-free chain checks clean.
	if r := run(t, project, "", "--workspace", project, "check"); r.code != 0 {
		t.Errorf("check with a prompt log: %+v", r)
	}

	// gc keeping the newest automatic checkpoint removes prompt 1's two: the prompt goes from
	// the log, prompt 2 keeps its number.
	dry := run(t, project, "", "--workspace", project, "gc", "--auto-keep-last", "1", "--auto-keep-within", "0", "--dry-run")
	if l.Prompts = nil; dry.code != 0 || !strings.Contains(dry.stdout, "would drop 1 prompt whose automatic checkpoints are all gone") {
		t.Errorf("gc --dry-run: %+v", dry)
	}
	if r := run(t, project, "", "--workspace", project, "--json", "list"); json.Unmarshal([]byte(r.stdout), &l) != nil || len(l.Prompts[0].Groups) != 2 {
		t.Errorf("gc --dry-run changed the prompt log: %+v", l.Prompts)
	}
	var gc struct {
		Removed        []string
		PromptsRemoved int
	}
	if r := run(t, project, "", "--workspace", project, "--json", "gc", "--auto-keep-last", "1", "--auto-keep-within", "0"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &gc) != nil || gc.PromptsRemoved != 1 || len(gc.Removed) != 2 {
		t.Fatalf("gc: %+v (%+v), want prompt 1's two checkpoints and prompt 1 removed", r, gc)
	}
	l.Prompts = nil
	if r := run(t, project, "", "--workspace", project, "--json", "list"); json.Unmarshal([]byte(r.stdout), &l) != nil || len(l.Prompts) != 1 || len(l.Prompts[0].Groups) != 1 || l.Prompts[0].Groups[0].N != 2 {
		t.Errorf("list after gc: %+v, want prompt 2 alone", l.Prompts)
	}
	if r := run(t, project, "", "--workspace", project, "rewind", "prompt:2", "--dry-run"); r.code != 0 {
		t.Errorf("rewind prompt:2 after gc: %+v", r)
	}
	if r := run(t, project, "", "--workspace", project, "rewind", "prompt:1"); r.code != 1 || !strings.Contains(r.stderr, "holds prompts 2 to 2") {
		t.Errorf("rewind prompt:1 after gc: %+v", r)
	}

	// Never blocks: a prompt in a folder no store may protect is let through, saying why.
	if r := runBin(t, hookBin, t.TempDir(), promptHook(t, "s", "hi"), "--workspace", "/", "guard"); r.code != 0 || r.stdout != "" {
		t.Errorf("the prompt hook for /: %+v, want exit 0 and nothing on stdout", r)
	}
}

// TestMCPRewindPrompt: over the official TypeScript SDK's client (mcpserver's
// testdata/tsclient) and the real binary, list gives each call its prompt as prompt:N and
// rewind takes prompt:N: the files go back to before that prompt's first call.
func TestMCPRewindPrompt(t *testing.T) {
	tsClientReady(t)
	dir := t.TempDir()
	sh(t, dir, "mkdir .git && printf v0 > app.txt")
	app := filepath.Join(dir, "app.txt")
	for i, text := range []string{"Add a login page", "Now the logout"} {
		if r := runBin(t, hookBin, t.TempDir(), promptHook(t, "e2e-session", text), "--workspace", dir, "guard"); r.code != 0 || r.stdout != "" {
			t.Fatalf("prompt hook: %+v", r)
		}
		if r := preToolUse(t, dir, bashHook(t, "PreToolUse", "make", fmt.Sprint("toolu_P", i+1))); r.code != 0 {
			t.Fatalf("PreToolUse: %+v", r)
		}
		writeFile(t, app, fmt.Sprint("v", i+1))
	}
	stdout := tsClient(t, "--cwd", dir, "--rewind", "prompt:2")
	var report struct{ List, Rewind toolResult }
	if err := json.Unmarshal(stdout, &report); err != nil {
		t.Fatalf("client.mjs report: %v\n%s", err, stdout)
	}
	var ls mcpserver.ListResult
	if report.List.IsError || json.Unmarshal(report.List.StructuredContent, &ls) != nil || len(ls.Sessions) != 1 || len(ls.Sessions[0].Calls) != 2 {
		t.Fatalf("list: %+v", report.List)
	}
	newest := ls.Sessions[0].Calls[0]
	if newest.ID != "toolu_P2" || newest.Prompt != "prompt:2 Now the logout" || ls.Sessions[0].Calls[1].Prompt != "prompt:1 Add a login page" || !strings.Contains(ls.Next, "prompt:N") {
		t.Fatalf("list's calls %+v, next %q: want each with its prompt:N", ls.Sessions[0].Calls, ls.Next)
	}
	var rw mcpserver.RestoreResult
	if report.Rewind.IsError || json.Unmarshal(report.Rewind.StructuredContent, &rw) != nil || rw.ID != newest.Checkpoint {
		t.Fatalf("rewind prompt:2: %+v, want checkpoint %s", report.Rewind, newest.Checkpoint)
	}
	if got := readFile(t, app); got != "v1" {
		t.Errorf("after rewind prompt:2 app.txt is %q, want v1 (before prompt 2's call)", got)
	}
}
