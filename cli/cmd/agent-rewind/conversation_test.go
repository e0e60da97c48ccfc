package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The real Claude Code session the harness recorded (tools/agents/testdata/transcripts): its
// session id and the ids of its calls 3 (Bash), 4 (Write) and 5 (Bash).
const (
	fixtureSession    = "dfc71bee-5170-486e-8678-324e2a9fe412"
	fixtureTranscript = "../../../tools/agents/testdata/transcripts/claude-code-2.1.328/" + fixtureSession + ".jsonl"
)

// TestRewindConversation: the plugin's hook before three calls of the recorded session, each
// changing the files; then rewind to before the second with --conversation. The dry run changes
// nothing and says what would go back; the rewind puts the files back, writes a new session
// beside the untouched original that ends before that call, prints the command that resumes
// it, and records both transcripts' SHA-256 on the chain. A call whose session has no
// transcript fails with neither half rewound.
// playFixtureSession plays the plugin's hook before calls 3, 4 and 5 of the recorded session, each
// changing app.txt or CHANGES.md, then a call of a session without a transcript; the recorded
// transcript is where Claude Code keeps it under home.
func playFixtureSession(t *testing.T) (project, home, orig string, original []byte) {
	t.Helper()
	project, home = t.TempDir(), t.TempDir()
	app, changes := filepath.Join(project, "app.txt"), filepath.Join(project, "CHANGES.md")
	writeFile(t, app, "version 1\n")
	orig = filepath.Join(home, ".claude", "projects", "-tmp-shop", fixtureSession+".jsonl")
	original, err := os.ReadFile(fixtureTranscript)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, orig, string(original))
	sess := map[string]any{"session_id": fixtureSession}
	steps := []struct {
		input string
		do    func()
	}{
		{hookInput(t, "PreToolUse", "Bash", map[string]any{"command": "printf 'version 2\\n' > app.txt"}, "call_mock_03_3", sess), func() { writeFile(t, app, "version 2\n") }},
		{hookInput(t, "PreToolUse", "Write", map[string]any{"file_path": changes, "content": "# changes\n"}, "call_mock_04_4", sess), func() { writeFile(t, changes, "# changes\n") }},
		{hookInput(t, "PreToolUse", "Bash", map[string]any{"command": "rm app.txt"}, "call_mock_05_5", sess), func() { os.Remove(app) }},
		{bashHook(t, "PreToolUse", "touch other", "toolu_other"), func() { writeFile(t, filepath.Join(project, "other"), "") }},
	}
	if r := runBin(t, hookBin, t.TempDir(), promptHook(t, fixtureSession, "release version 2 and tell Ann"), "--workspace", project, "guard"); r.code != 0 {
		t.Fatalf("the prompt hook: %+v", r)
	}
	for i, s := range steps {
		if r := preToolUse(t, project, s.input, "HOME="+home); r.code != 0 {
			t.Fatalf("hook before step %d: %+v", i+1, r)
		}
		s.do()
	}
	return project, home, orig, original
}

func TestRewindConversation(t *testing.T) {
	project, home, orig, original := playFixtureSession(t)
	env := append(os.Environ(), "HOME="+home, "CLAUDE_CONFIG_DIR=")
	app, changes := filepath.Join(project, "app.txt"), filepath.Join(project, "CHANGES.md")
	rewind := func(args ...string) result {
		return runIn(t, project, env, "", append([]string{"--workspace", project, "rewind"}, args...)...)
	}
	transcripts := func() []string {
		m, _ := filepath.Glob(filepath.Join(filepath.Dir(orig), "*.jsonl"))
		return m
	}

	dry := rewind("call_mock_04_4", "--conversation", "--dry-run")
	if dry.code != 0 || !strings.Contains(dry.stdout, "would end just before tool call call_mock_04_4") || !strings.Contains(dry.stdout, "call_mock_04_4, call_mock_05_5") {
		t.Fatalf("dry run: %+v", dry)
	}
	if readFile(t, changes) != "# changes\n" || len(transcripts()) != 1 {
		t.Fatalf("the dry run changed something: CHANGES.md %q, transcripts %v", readFile(t, changes), transcripts())
	}

	if r := rewind("toolu_other", "--conversation"); r.code != 1 || !strings.Contains(r.stderr, "transcript not found") || !strings.Contains(r.stderr, "nothing was rewound") {
		t.Fatalf("a call of a session without a transcript: %+v", r)
	}
	if readFile(t, filepath.Join(project, "other")) != "" {
		t.Fatalf("the failed conversation rewind rewound the files")
	}

	r := rewind("call_mock_04_4", "--conversation", "--json")
	var out struct {
		To           string
		Conversation struct {
			Client, Session, ForkSession, Path, Resume, OriginalSha256, Sha256 string
			Written                                                            bool
			DroppedCalls                                                       []string
			ChainSeq                                                           int64
		}
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
		t.Fatalf("rewind --conversation --json: %+v", r)
	}
	c := out.Conversation
	if got := readFile(t, app) + readFile(t, changes); got != "version 2\n<absent>" {
		t.Errorf("files after the rewind: %q, want app.txt as before the Write and no CHANGES.md", got)
	}
	if c.Client != "claude-code" || c.Session != fixtureSession || !c.Written || c.Resume != "claude --resume "+c.ForkSession || filepath.Dir(c.Path) != filepath.Dir(orig) {
		t.Fatalf("conversation %+v", c)
	}
	if now, _ := os.ReadFile(orig); !bytes.Equal(now, original) {
		t.Errorf("the original transcript changed")
	}
	fork, err := os.ReadFile(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(fork, []byte(`"tool_use_id":"call_mock_03_3"`)) || bytes.Contains(fork, []byte("call_mock_04_4")) || bytes.Contains(fork, []byte(`"`+fixtureSession+`"`)) {
		t.Errorf("the fork should hold call 3's result, nothing of call 4, and only the new session id")
	}
	var entry struct{ Checkpoint, Call, Client, Session, ForkSession, OriginalSha256, ForkSha256 string }
	for _, e := range readChain(t, project) {
		if e.Kind == "conversation" {
			json.Unmarshal(e.Data, &entry)
			if strings.Contains(string(e.Data), "call_mock_03_3") || strings.Contains(string(e.Data), "version 2") {
				t.Errorf("the chain entry holds transcript content: %s", e.Data)
			}
		}
	}
	if entry.Checkpoint != out.To || entry.Call != "call_mock_04_4" || entry.ForkSession != c.ForkSession || entry.OriginalSha256 != sum(original) || entry.ForkSha256 != sum(fork) {
		t.Errorf("chain entry %+v, want checkpoint %s, the call, the fork and both SHA-256", entry, out.To)
	}
	verifyChain(t, project)
	if r := run(t, project, "", "--workspace", project, "check"); r.code != 0 {
		t.Errorf("check after a conversation rewind: %+v", r)
	}

	text := rewind("call_mock_03_3", "--conversation")
	t.Logf("%s", text.stdout)
	if text.code != 0 || !strings.Contains(text.stdout, "resume it: claude --resume ") {
		t.Errorf("rewind --conversation's text: %+v", text)
	}
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestUIRewindConversation: the page folds an agent's calls under the prompt that led to them,
// inside the session's fold (each folds and unfolds), offers an automatic checkpoint's rewind
// with the
// conversation, shows in the dry run what of the conversation goes back, and after it the
// command that resumes the agent; the files and the fork are the CLI's.
func TestUIRewindConversation(t *testing.T) {
	ctx := browser(t)
	project, home, orig, _ := playFixtureSession(t)
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	before4 := ""
	for _, s := range listJSON(t, project).Sessions {
		for _, c := range s.Calls {
			if c.ID == "call_mock_04_4" {
				before4 = c.Checkpoint
			}
		}
	}
	// The calls of prompt 1 that took a checkpoint of their own: the rows of its fold.
	var l struct {
		Prompts []struct {
			Groups []struct {
				N     int
				Calls []struct{ Reused bool }
			}
		}
	}
	if r := run(t, project, "", "--workspace", project, "--json", "list"); json.Unmarshal([]byte(r.stdout), &l) != nil {
		t.Fatalf("list: %+v", r)
	}
	own := 0
	for _, sg := range l.Prompts {
		for _, g := range sg.Groups {
			for _, c := range g.Calls {
				if g.N == 1 && !c.Reused {
					own++
				}
			}
		}
	}
	srv := startUI(t, project)
	// The rows as the page shows them, top to bottom: s (session header), p (prompt header),
	// c (a call's checkpoint inside the prompt's fold), other rows by their id.
	const rows = `[...document.querySelectorAll("#timeline .row")].map(r => r.classList.contains("prompt-row") ? "p" :
	  r.classList.contains("group-row") ? "s" : r.classList.contains("in-prompt") ? "c" : "-").join(" ")`
	// The header of the session the prompt's fold is in: the nearest one above it.
	const sessionHeader = `(() => { let r = document.getElementById("prompt-1");
	  while (r && !(r.classList.contains("group-row") && !r.classList.contains("prompt-row"))) r = r.previousElementSibling;
	  r.click(); return ""; })()`
	var ignored string
	var dry, done, prompt, open, foldShut, foldOpen, sessionShut string
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.url),
		chromedp.WaitVisible(chromedp.CSS("#prompt-1")),
		into(&prompt, chromedp.Text(chromedp.CSS("#prompt-1"))),
		into(&open, chromedp.Evaluate[string](rows)),
		chromedp.Click(chromedp.CSS("#prompt-1")),
		into(&foldShut, chromedp.Evaluate[string](rows)),
		chromedp.Click(chromedp.CSS("#prompt-1")),
		into(&foldOpen, chromedp.Evaluate[string](rows)),
		into(&ignored, chromedp.Evaluate[string](sessionHeader)),
		into(&sessionShut, chromedp.Evaluate[string](rows)),
		chromedp.Click(chromedp.CSS("#timeline .group-row.folded")),
		chromedp.WaitVisible(chromedp.CSS("#row-"+before4+" .rewind-btn")),
		chromedp.Click(chromedp.CSS("#row-"+before4+" .rewind-btn")),
		chromedp.WaitVisible(chromedp.CSS("#rewind-conversation")),
		chromedp.Click(chromedp.CSS("#rewind-conversation")),
		chromedp.WaitVisible(chromedp.CSS("#conversation-dry")),
		into(&dry, chromedp.Text(chromedp.CSS("#conversation-dry"))),
		chromedp.Click(chromedp.CSS("#modal-confirm")),
		chromedp.WaitVisible(chromedp.CSS("#conversation-done")),
		into(&done, chromedp.Text(chromedp.CSS("#conversation-done"))),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "conversation-rewind")
	prompt = strings.Join(strings.Fields(prompt), " ")
	if want := fmt.Sprintf("prompt 1 “release version 2 and tell Ann” → %d tool calls", own); !strings.Contains(prompt, want) {
		t.Errorf("the prompt's fold says %q, want %q", prompt, want)
	}
	t.Logf("rows: %s", open)
	calls := strings.TrimSpace(strings.Repeat(" c", own))
	if !strings.Contains(open, "s p "+calls) || strings.Count(open, "c") != own || foldOpen != open || strings.Count(open, "s") != 2 {
		t.Errorf("rows %q: want the session's header, then the prompt's, then its %d calls (and the same after folding and unfolding it: %q)", open, own, foldOpen)
	}
	if !strings.Contains(foldShut, "s p") || strings.Contains(foldShut, "c") {
		t.Errorf("prompt folded, rows %q: want its header and none of its calls", foldShut)
	}
	if strings.Contains(sessionShut, "p") || strings.Contains(sessionShut, "c") || strings.Count(sessionShut, "s") != 2 {
		t.Errorf("session folded, rows %q: want neither the prompt's fold nor its calls", sessionShut)
	}
	if !strings.Contains(dry, "claude-code") || !strings.Contains(dry, "9 tool calls go back") {
		t.Errorf("the dry run says %q", dry)
	}
	forks, _ := filepath.Glob(filepath.Join(filepath.Dir(orig), "*.jsonl"))
	if len(forks) != 2 || !strings.Contains(done, "claude --resume ") {
		t.Errorf("after the page's rewind: %q, transcripts %v", done, forks)
	}
	if got := readFile(t, filepath.Join(project, "CHANGES.md")); got != "<absent>" {
		t.Errorf("CHANGES.md is %q after the rewind to before the Write", got)
	}
	if k := kinds(readChain(t, project)); k["conversation"] != 1 {
		t.Errorf("chain kinds %v, want one conversation entry", k)
	}
}
