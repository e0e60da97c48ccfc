package agentws_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/snapshot"
)

// TestRewindConversation: the MCP rewind with conversation, over the real Claude Code session
// the harness recorded: the files back to before the call, a fork beside the original
// transcript, and the command that resumes it (the MCP server puts it in next); a call of a session without a
// transcript rewinds nothing.
func TestRewindConversation(t *testing.T) {
	const session = "dfc71bee-5170-486e-8678-324e2a9fe412"
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home) // os.UserHomeDir on Windows
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	b, err := os.ReadFile("../../../tools/agents/testdata/transcripts/claude-code-2.1.328/" + session + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(home, ".claude", "projects", "-shop", session+".jsonl")
	write(t, filepath.Dir(orig), filepath.Base(orig), string(b))

	w, root := newWorkspace(t, map[string]string{"app.txt": "v1"})
	ws, err := workspace.Init(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ws.Snapshots(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := prompts.Append(ws.Path(prompts.File), prompts.Prompt{Session: session, Agent: "claude-code", Text: "release it", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ id, content string }{{"call_mock_03_3", "v2"}, {"call_mock_04_4", "v3"}, {"toolu_other", "v4"}} {
		sess := session
		if i == 2 {
			sess = "no-transcript"
		}
		if _, err := s.AutoCheckpoint(t.Context(), snapshot.ToolCall{ID: c.id, Tool: "Bash", Session: sess, Agent: "claude-code"}, nil); err != nil {
			t.Fatal(err)
		}
		write(t, root, "app.txt", c.content)
	}
	ws.Close()

	// list: each call with the prompt that led to it, where one was logged.
	l, err := w.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range l.Calls {
		if want := map[bool]string{true: "prompt:1 release it", false: ""}[c.Session == session]; c.Prompt != want {
			t.Errorf("list: call %s of session %s has prompt %q, want %q", c.ID, c.Session, c.Prompt, want)
		}
	}

	if _, err := w.Rewind(t.Context(), mcpserver.RewindRequest{ID: "toolu_other", Conversation: true}); err == nil || !strings.Contains(err.Error(), "nothing was rewound") {
		t.Errorf("a session without a transcript: %v", err)
	}
	if got := read(t, root, "app.txt"); got != "v4" {
		t.Fatalf("the failed rewind changed app.txt to %q", got)
	}
	rw, err := w.Rewind(t.Context(), mcpserver.RewindRequest{ID: "call_mock_04_4", Conversation: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, root, "app.txt"); got != "v2" {
		t.Errorf("app.txt %q, want v2 (before call 4)", got)
	}
	forks, _ := filepath.Glob(filepath.Join(filepath.Dir(orig), "*.jsonl"))
	if len(forks) != 2 || !strings.Contains(rw.Resume, "claude --resume ") {
		t.Errorf("forks %v, result %+v", forks, rw)
	}
	if now, _ := os.ReadFile(orig); string(now) != string(b) {
		t.Errorf("the original transcript changed")
	}

	// Files alone, by prompt: the state before the prompt's first call.
	if _, err := w.Rewind(t.Context(), mcpserver.RewindRequest{ID: "prompt:1"}); err != nil || read(t, root, "app.txt") != "v1" {
		t.Errorf("rewind prompt:1: %v, app.txt %q; want v1", err, read(t, root, "app.txt"))
	}
	if _, err := w.Rewind(t.Context(), mcpserver.RewindRequest{ID: "prompt:2"}); err == nil || !strings.Contains(err.Error(), "no prompt 2") {
		t.Errorf("rewind prompt:2: %v", err)
	}
}
