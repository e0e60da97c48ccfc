package agents

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// TestCodexRewindConversation is issue 32's "done when" with Codex CLI 0.169.0: three changing
// shell calls, `agent-rewind rewind <call 2> --conversation`, then the printed `codex resume
// <id>` run headless (`codex exec resume <id> continue`, the same session by id) sends the
// model call 1 and its output and nothing of call 2 or after; the files are as before call 2.
func TestCodexRewindConversation(t *testing.T) {
	e := New(t)
	m := e.Model(mockmodel.Sequence("done",
		CodexShell("printf 'version 2\\n' > app.txt"),
		CodexShell("printf '# changes\\n' > CHANGES.md"),
		CodexShell("printf 'version 3\\n' > app.txt"),
	))
	e.CodexConfigure(m)
	e.InstallCodex()
	s := e.Codex(m, e.Project, CodexOptions{BypassHookTrust: true}, "release version 3")
	calls := m.CallsTo("exec_command")
	if len(calls) != 3 || s.Rollout == "" {
		t.Fatalf("the model made %d shell calls (want 3); rollout %q", len(calls), s.Rollout)
	}
	checkPromptGroup(t, e, s.ThreadID, "codex", "release version 3", s.Rollout, calls)
	before2, err := m.Trees.Before(calls[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	orig := e.ReadFile(s.Rollout)

	var r conversationRewound
	e.MustCLI(e.Project, &r, "rewind", calls[1].ID, "--conversation")
	c := r.Conversation
	if !c.Written || c.Session != s.ThreadID || c.Client != "codex" || !slices.Equal(c.DroppedCalls, []string{calls[1].ID, calls[2].ID}) {
		t.Fatalf("rewind --conversation: %+v (thread %s)", c, s.ThreadID)
	}
	now, err := ReadTree(e.Project)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(before2, now); len(d) > 0 {
		t.Errorf("the files differ from before call 2:\n%s", strings.Join(d, "\n"))
	}
	if e.ReadFile(s.Rollout) != orig {
		t.Errorf("the original rollout file changed")
	}
	if !strings.HasPrefix(filepath.Base(c.Path), "rollout-") || !strings.HasPrefix(c.Path, filepath.Join(e.CodexHome(), "sessions")+string(filepath.Separator)) {
		t.Errorf("the fork %s is not a rollout file under %s/sessions", c.Path, e.CodexHome())
	}
	resume := strings.Fields(c.Resume)
	if len(resume) != 3 || resume[0] != "codex" || resume[1] != "resume" || resume[2] != c.ForkSession {
		t.Fatalf("the resume command %q, want codex resume %s", c.Resume, c.ForkSession)
	}

	m2 := e.Model(mockmodel.Sequence("resumed"))
	e.CodexConfigure(m2)
	res := e.Run(e.Project, 3*time.Minute, CodexEnv(m2), e.Client("codex"), "exec", "--json", "--strict-config",
		"--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "resume", c.ForkSession, "continue")
	if res.Code != 0 {
		t.Fatalf("codex exec resume %s continue: exit %d\n%s\n%s", c.ForkSession, res.Code, tail(res.Stderr, 3000), tail(res.Stdout, 2000))
	}
	last := m2.Last()
	if len(last.Messages) == 0 {
		t.Fatalf("the resumed session sent the model nothing with tools (%d requests)", len(m2.Log()))
	}
	if _, ok := last.Result(calls[0].ID); !ok {
		t.Errorf("the resumed conversation lacks call 1 (%s) and its output: calls %+v", calls[0].ID, last.Calls())
	}
	for _, gone := range calls[1:] {
		if bytes.Contains(last.Raw, []byte(gone.ID)) {
			t.Errorf("the resumed conversation still holds %s", gone.ID)
		}
	}
	if !strings.Contains(last.LastUserText(), "continue") || !strings.Contains(string(last.Raw), "release version 3") {
		t.Errorf("the resumed conversation should hold the first prompt and end with \"continue\": %q", last.LastUserText())
	}
	var ids []string
	for _, tc := range last.Calls() {
		ids = append(ids, tc.ID)
	}
	thread := ""
	for _, line := range strings.Split(res.Stdout, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["type"] == "thread.started" {
			thread, _ = ev["thread_id"].(string)
		}
	}
	t.Logf("resumed %s (thread %s): %d messages to the model, calls %v", c.ForkSession, thread, len(last.Messages), ids)
}
