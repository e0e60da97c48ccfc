package agents

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// TestGeminiCLIPrompt: the shipped BeforeAgent hook logs a Gemini CLI session's prompt
// (redacted, with the session's transcript path), list groups the session's automatically
// checkpointed calls under it, rewind prompt:1 puts the files back as before them, and the
// hook adds nothing to what the model reads.
func TestGeminiCLIPrompt(t *testing.T) {
	e := New(t)
	e.InstallGemini()
	const prompt = "ship version 2, the key is sk-ant-api03-abcdefghijklmnop"
	m := e.Model(mockmodel.Sequence("done", runShell("printf 'version 2\\n' > app.txt"), runShell("printf 'notes\\n' > NOTES.md")))
	s := e.Gemini(m, e.Project, prompt)
	t.Logf("payloads kept: %v", e.SavePayloads("gemini-cli"))
	if e.ReadFile(e.Project+"/app.txt") != "version 2\n" {
		t.Fatalf("the call did not run: %q\nstderr: %s", s.Response, s.Stderr)
	}

	var sent map[string]any // what Gemini gave the hook
	for _, p := range e.GeminiPayloads() {
		if p["hook_event_name"] == "BeforeAgent" {
			sent = p
		}
	}
	if sent == nil || sent["prompt"] != prompt || sent["session_id"] != s.SessionID {
		t.Fatalf("Gemini's BeforeAgent input %v, want the prompt %q of session %s", sent, prompt, s.SessionID)
	}
	transcript, _ := sent["transcript_path"].(string)

	var l struct {
		Prompts []struct {
			Session string `json:"session"`
			Agent   string `json:"agent"`
			Groups  []struct {
				N      int `json:"n"`
				Prompt *struct {
					Text, Agent, Transcript string
				} `json:"prompt"`
				Calls []Call `json:"calls"`
			} `json:"groups"`
		} `json:"prompts"`
	}
	e.MustCLI(e.Project, &l, "list")
	if len(l.Prompts) != 1 || l.Prompts[0].Session != s.SessionID || len(l.Prompts[0].Groups) != 1 || l.Prompts[0].Groups[0].Prompt == nil {
		t.Fatalf("list's prompts: %+v, want one prompt of session %s", l.Prompts, s.SessionID)
	}
	g := l.Prompts[0].Groups[0]
	if want := "ship version 2, the key is sk-***"; g.N != 1 || g.Prompt.Text != want || g.Prompt.Agent != "gemini-cli" || transcript == "" || g.Prompt.Transcript != transcript {
		t.Errorf("prompt logged %+v (n %d), want %q by gemini-cli with transcript %q", *g.Prompt, g.N, want, transcript)
	}
	if log := e.ReadFile(filepath.Join(e.StoreOf(e.Project).Store, "prompts.jsonl")); !strings.Contains(log, "sk-***") || strings.Contains(log, "abcdefghijklmnop") {
		t.Errorf("prompts.jsonl in the store holds %q: want the prompt, its key redacted", log)
	}
	if len(g.Calls) != 2 || g.Calls[0].Tool != "run_shell_command" {
		t.Errorf("prompt 1's calls %+v, want the two shell calls", g.Calls)
	}
	before, err := m.Trees.Before(m.Calls()[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Run(e.Project, time.Minute, nil, e.Bin.Rewind, "list"); r.Code != 0 || !strings.Contains(r.Stdout, `prompt 1 "ship version 2, the key is sk-***"`) || strings.Contains(r.Stdout, "abcdefghijklmnop") {
		t.Errorf("list (exit %d) does not show the prompt redacted:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	e.MustCLI(e.Project, nil, "rewind", "prompt:1")
	now, err := ReadTree(e.Project)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(before, now); len(d) > 0 {
		t.Errorf("rewind prompt:1: the files differ from before the prompt's first call:\n%s", strings.Join(d, "\n"))
	}
	if last := m.Last(); last == nil || strings.Contains(string(last.Raw), "agent-rewind: prompt") || strings.Contains(string(last.Raw), "sk-***") {
		t.Errorf("the prompt hook's words reached the model")
	}
}
