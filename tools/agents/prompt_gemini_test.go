package agents

import (
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// TestGeminiCLIPrompt: the shipped BeforeAgent hook logs a Gemini CLI session's prompt
// (redacted, with the session's transcript path), list shows it under the session, and the
// hook adds nothing to what the model reads.
func TestGeminiCLIPrompt(t *testing.T) {
	e := New(t)
	e.InstallGemini()
	const prompt = "ship version 2, the key is sk-ant-api03-abcdefghijklmnop"
	m := e.Model(mockmodel.Sequence("done", runShell("printf 'version 2\\n' > app.txt")))
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
	if r := e.Run(e.Project, time.Minute, nil, e.Bin.Rewind, "list"); r.Code != 0 || !strings.Contains(r.Stdout, `prompt 1 "ship version 2, the key is sk-***"`) || strings.Contains(r.Stdout, "abcdefghijklmnop") {
		t.Errorf("list (exit %d) does not show the prompt redacted:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if last := m.Last(); last == nil || strings.Contains(string(last.Raw), "agent-rewind: prompt") || strings.Contains(string(last.Raw), "sk-***") {
		t.Errorf("the prompt hook's words reached the model")
	}
}
