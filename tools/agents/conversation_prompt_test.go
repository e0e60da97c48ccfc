package agents

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// TestClaudeCodeRewindPrompt: two prompts of one Claude Code session (the second by
// `claude --resume`), each with a changing call; the prompt hook logged both, list groups the
// calls by them, and `rewind prompt:2 --conversation` gives back the files as before the
// second prompt's work and a fork that, resumed, sends the model the first prompt and its call
// and nothing of the second prompt.
func TestClaudeCodeRewindPrompt(t *testing.T) {
	e := New(t)
	writeA, writeB := bash("printf 'a\\n' > a.txt"), bash("printf 'b\\n' > b.txt")
	mA := e.Model(mockmodel.Sequence("done", writeA))
	s := e.Claude(mA, e.Project, true, "write a")
	p, err := PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	claude := func(m *Model, args ...string) Result {
		t.Helper()
		r := e.Run(e.Project, 3*time.Minute, ClaudeEnv(m), e.Client("claude"), append(args, "--output-format", "stream-json", "--verbose",
			"--plugin-dir", p, "--allowedTools", "Bash", "Write")...)
		if r.Code != 0 {
			t.Fatalf("claude %s: exit %d\n%s\n%s", strings.Join(args, " "), r.Code, r.Stderr, tail(r.Stdout, 2000))
		}
		return r
	}
	// The second prompt's model: the sequence goes on from the call whose result it reads.
	m := e.Model(mockmodel.Sequence("done", writeA, writeB))
	claude(m, "--resume", s.SessionID, "-p", "now write b")
	calls := m.Calls()
	if len(calls) != 2 || e.ReadFile(e.Project+"/b.txt") != "b\n" {
		t.Fatalf("the two prompts made %d calls: %+v", len(calls), calls)
	}

	var l promptGroups
	e.MustCLI(e.Project, &l, "list")
	var texts []string
	for _, sg := range l.Prompts {
		for _, g := range sg.Groups {
			if g.Prompt != nil {
				texts = append(texts, sg.Session+": "+g.Prompt.Text)
			}
		}
	}
	t.Logf("prompts logged: %v", texts)
	if len(l.Prompts) != 1 || len(l.Prompts[0].Groups) != 2 || l.Prompts[0].Groups[1].N != 2 || len(l.Prompts[0].Groups[1].Calls) != 1 || l.Prompts[0].Groups[1].Calls[0].ID != calls[1].ID {
		t.Fatalf("list's prompts: %+v, want one session, prompt 2 with call %s", l.Prompts, calls[1].ID)
	}
	before, err := m.Trees.Before(calls[1].ID)
	if err != nil {
		t.Fatal(err)
	}

	var r conversationRewound
	e.MustCLI(e.Project, &r, "rewind", "prompt:2", "--conversation")
	now, err := ReadTree(e.Project)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(before, now); len(d) > 0 {
		t.Errorf("the files differ from before prompt 2's call:\n%s", strings.Join(d, "\n"))
	}
	if !r.Conversation.Written {
		t.Fatalf("no fork written: %+v", r.Conversation)
	}
	m2 := e.Model(mockmodel.Sequence("resumed"))
	claude(m2, "--resume", r.Conversation.ForkSession, "-p", "start over")
	last := m2.Last()
	if _, ok := last.Result(calls[0].ID); !ok {
		t.Errorf("the resumed conversation lacks prompt 1's call %s", calls[0].ID)
	}
	for _, gone := range []string{calls[1].ID, "now write b"} {
		if bytes.Contains(last.Raw, []byte(gone)) {
			t.Errorf("the resumed conversation still holds %q", gone)
		}
	}
	if !bytes.Contains(last.Raw, []byte("write a")) || !strings.Contains(last.LastUserText(), "start over") {
		t.Errorf("the resumed conversation should hold prompt 1 and end with the new prompt: %q", last.LastUserText())
	}
}
