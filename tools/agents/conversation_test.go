package agents

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// Rewound is also what `agent-rewind --json rewind ID --conversation` adds: the conversation.
type conversationRewound struct {
	Rewound
	Conversation struct {
		Client, Session, ForkSession, Path, Resume string
		Written                                    bool
		DroppedCalls                               []string
	} `json:"conversation"`
}

// promptGroups is what `agent-rewind --json list` says of the prompts.
type promptGroups struct {
	Prompts []struct {
		Session string `json:"session"`
		Groups  []struct {
			N      int `json:"n"`
			Prompt *struct {
				Text       string `json:"text"`
				Agent      string `json:"agent"`
				Transcript string `json:"transcript"`
			} `json:"prompt"`
			Calls []Call `json:"calls"`
		} `json:"groups"`
	} `json:"prompts"`
}

// checkPromptGroup checks that the client's prompt hook logged prompt for session with the
// session's transcript (the file the client wrote), and that list groups the calls under it.
func checkPromptGroup(t *testing.T, e *Env, session, agent, prompt, transcript string, calls []mockmodel.ToolCall) {
	t.Helper()
	var l promptGroups
	e.MustCLI(e.Project, &l, "list")
	if len(l.Prompts) != 1 || l.Prompts[0].Session != session || len(l.Prompts[0].Groups) != 1 {
		t.Errorf("list's prompts: %+v, want one group of session %s", l.Prompts, session)
		return
	}
	g := l.Prompts[0].Groups[0]
	var ids []string
	for _, c := range g.Calls {
		ids = append(ids, c.ID)
	}
	var want []string
	for _, c := range calls {
		want = append(want, c.ID)
	}
	if g.N != 1 || g.Prompt == nil || g.Prompt.Text != prompt || g.Prompt.Agent != agent || !slices.Equal(ids, want) {
		t.Errorf("prompt group %+v (calls %v), want prompt 1 %q of %s with calls %v", g, ids, prompt, agent, want)
	} else if g.Prompt.Transcript != transcript {
		t.Errorf("the prompt log has the transcript %q, want the file the client wrote, %s", g.Prompt.Transcript, transcript)
	}
}

// TestClaudeCodeRewindConversation is issue 32's "done when": a session of Claude Code with the
// plugin makes three changing calls (Bash, Write, Bash); `agent-rewind rewind <call 2>
// --conversation` puts the files back as they were before call 2 and forks the session; the
// command it prints, run with -p "continue", sends the model a conversation that holds call 1
// and its result and nothing of call 2 or after.
func TestClaudeCodeRewindConversation(t *testing.T) {
	e := New(t)
	newFile := filepath.Join(e.Project, "CHANGES.md")
	m := e.Model(mockmodel.Sequence("done",
		bash("printf 'version 2\\n' > app.txt"),
		mockmodel.Call(map[string]string{"file_path": newFile, "content": "# changes\n\nversion 2\n"}, "Write"),
		bash("printf 'version 3\\n' > app.txt && rm -f README.md"),
	))
	s := e.Claude(m, e.Project, true, "release version 3")
	calls := m.Calls()
	if len(calls) != 3 {
		t.Fatalf("the model made %d calls, want the script's 3: %+v", len(calls), calls)
	}
	original, ok := e.ClaudeTranscripts()[s.SessionID]
	if !ok {
		t.Fatalf("no transcript of session %s", s.SessionID)
	}
	checkPromptGroup(t, e, s.SessionID, "claude-code", "release version 3", original, calls)
	before2, err := m.Trees.Before(calls[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	origBytes := e.ReadFile(original)

	var dry conversationRewound
	e.MustCLI(e.Project, &dry, "rewind", calls[1].ID, "--conversation", "--dry-run")
	if dry.Conversation.Written || !slices.Equal(dry.Conversation.DroppedCalls, []string{calls[1].ID, calls[2].ID}) {
		t.Errorf("dry run: %+v, want calls 2 and 3 to go back and nothing written", dry.Conversation)
	}

	var r conversationRewound
	e.MustCLI(e.Project, &r, "rewind", calls[1].ID, "--conversation")
	c := r.Conversation
	if !c.Written || c.Session != s.SessionID || c.Client != "claude-code" || filepath.Dir(c.Path) != filepath.Dir(original) {
		t.Fatalf("rewind --conversation: %+v (session %s, transcript %s)", c, s.SessionID, original)
	}
	now, err := ReadTree(e.Project)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(before2, now); len(d) > 0 {
		t.Errorf("the files differ from before call 2:\n%s", strings.Join(d, "\n"))
	}
	if e.ReadFile(original) != origBytes {
		t.Errorf("the original transcript changed")
	}

	// The printed command, as a user runs it, headless.
	resume := strings.Fields(c.Resume)
	if len(resume) != 3 || resume[0] != "claude" || resume[1] != "--resume" || resume[2] != c.ForkSession {
		t.Fatalf("the resume command %q, want claude --resume %s", c.Resume, c.ForkSession)
	}
	m2 := e.Model(mockmodel.Sequence("resumed"))
	p, err := PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	res := e.Run(e.Project, 3*time.Minute, ClaudeEnv(m2), e.Client("claude"), append(resume[1:], "-p", "continue",
		"--output-format", "stream-json", "--verbose", "--plugin-dir", p, "--allowedTools", "Bash", "Write")...)
	if res.Code != 0 {
		t.Fatalf("%s -p continue: exit %d\n%s\n%s", c.Resume, res.Code, res.Stderr, tail(res.Stdout, 2000))
	}
	last := m2.Last()
	if len(last.Messages) == 0 {
		t.Fatalf("the resumed session sent the model nothing with tools (%d requests)", len(m2.Log()))
	}
	if _, ok := last.Result(calls[0].ID); !ok || !slices.ContainsFunc(last.Calls(), func(tc mockmodel.ToolCall) bool { return tc.ID == calls[0].ID }) {
		t.Errorf("the resumed conversation lacks call 1 (%s) or its result: calls %+v", calls[0].ID, last.Calls())
	}
	for _, gone := range calls[1:] {
		if bytes.Contains(last.Raw, []byte(gone.ID)) {
			t.Errorf("the resumed conversation still holds %s (%s)", gone.ID, gone.Name)
		}
	}
	if !strings.Contains(last.LastUserText(), "continue") || !strings.Contains(string(last.Raw), "release version 3") {
		t.Errorf("the resumed conversation should hold the first prompt and end with \"continue\": last user text %q", last.LastUserText())
	}
	var ids []string
	for _, tc := range last.Calls() {
		ids = append(ids, tc.ID)
	}
	t.Logf("resumed %s: %d messages to the model, calls %v", c.ForkSession, len(last.Messages), ids)
}
