package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The real sessions the harness recorded (tools/agents/testdata/transcripts/README.md).
const (
	fixtures      = "../../../tools/agents/testdata/transcripts"
	claudeSession = "dfc71bee-5170-486e-8678-324e2a9fe412"
	codexSession  = "01a23421-9d61-7582-b3f4-5833cb15b016"
)

var (
	claudeFixture = filepath.Join(fixtures, "claude-code-2.1.328", claudeSession+".jsonl")
	codexFixture  = filepath.Join(fixtures, "codex-0.169.0", "rollout-2026-12-02T00-22-27-"+codexSession+".jsonl")
)

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForkClaudeFixture cuts the real Claude Code session before its Write (call 4): the fork
// holds calls 1-3 with their results and nothing of call 4 or later, every line names the new
// session and no other, and its uuid chain is whole.
func TestForkClaudeFixture(t *testing.T) {
	b := readFixture(t, claudeFixture)
	const fork = "11111111-2222-4333-8444-555555555555"
	f, err := forkClaude(b, claudeSession, Cut{Call: "call_mock_04_4"}, fork)
	if err != nil {
		t.Fatal(err)
	}
	out := string(f.data)
	for _, want := range []string{`"id":"call_mock_03_3"`, `"tool_use_id":"call_mock_03_3"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the fork lacks %s", want)
		}
	}
	for _, gone := range []string{"call_mock_04_4", "call_mock_05_5", "call_mock_12_12", claudeSession} {
		if strings.Contains(out, gone) {
			t.Errorf("the fork still holds %s", gone)
		}
	}
	uuids := map[string]bool{}
	for i, l := range lines(f.data) {
		var p struct {
			SessionID  string  `json:"sessionId"`
			UUID       string  `json:"uuid"`
			ParentUUID *string `json:"parentUuid"`
			LeafUUID   string  `json:"leafUuid"`
		}
		if err := json.Unmarshal(l, &p); err != nil {
			t.Fatalf("fork line %d: %v", i+1, err)
		}
		if p.SessionID != "" && p.SessionID != fork {
			t.Errorf("fork line %d names session %s", i+1, p.SessionID)
		}
		if p.ParentUUID != nil && *p.ParentUUID != "" && !uuids[*p.ParentUUID] {
			t.Errorf("fork line %d's parent %s is not in the fork", i+1, *p.ParentUUID)
		}
		if p.UUID != "" {
			uuids[p.UUID] = true
		}
	}
	if want := []string{"call_mock_04_4", "call_mock_05_5"}; len(f.DroppedCalls) != 9 || f.DroppedCalls[0] != want[0] || f.DroppedCalls[1] != want[1] {
		t.Errorf("dropped calls %v, want the 9 from call_mock_04_4 on", f.DroppedCalls)
	}
	if f.KeptMessages != 7 || f.DroppedMessages != 19 {
		t.Errorf("kept %d, dropped %d messages; want 7 (the prompt, 3 calls, 3 results) and 19", f.KeptMessages, f.DroppedMessages)
	}
}

// TestForkCodexFixture cuts the real Codex rollout before its first shell command (call 3).
func TestForkCodexFixture(t *testing.T) {
	b := readFixture(t, codexFixture)
	const fork = "019a0000-0000-7000-8000-000000000001"
	f, err := forkCodex(b, codexSession, Cut{Call: "call_mock_03_3"}, fork)
	if err != nil {
		t.Fatal(err)
	}
	out := string(f.data)
	if !strings.Contains(out, `"call_id":"call_mock_02_2"`) || strings.Contains(out, "call_mock_03_3") || strings.Contains(out, "call_mock_09_9") {
		t.Errorf("the fork should hold call 2 and nothing of call 3 on:\n%s", out[max(0, len(out)-2000):])
	}
	if strings.Contains(out, `"`+codexSession+`"`) {
		t.Errorf("the fork still names the original session")
	}
	ls := lines(f.data)
	var meta struct {
		Type    string `json:"type"`
		Payload struct {
			ID        string `json:"id"`
			SessionID string `json:"session_id"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(ls[0], &meta); err != nil || meta.Type != "session_meta" || meta.Payload.ID != fork || meta.Payload.SessionID != fork {
		t.Errorf("the fork's first line is %+v (%v), want the session_meta of %s", meta, err, fork)
	}
	if len(f.DroppedCalls) != 8 || f.DroppedCalls[0] != "call_mock_03_3" {
		t.Errorf("dropped calls %v", f.DroppedCalls)
	}
}

// TestUnknownVersionsRefused: a version no real session was read from is refused, not guessed.
func TestUnknownVersionsRefused(t *testing.T) {
	c := bytes.ReplaceAll(readFixture(t, claudeFixture), []byte(`"version":"2.1.328"`), []byte(`"version":"2.2.0"`))
	if _, err := forkClaude(c, claudeSession, Cut{Call: "call_mock_04_4"}, "x"); !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "2.2.0") {
		t.Errorf("Claude Code 2.2.0: %v, want ErrUnknownFormat naming the version", err)
	}
	x := bytes.ReplaceAll(readFixture(t, codexFixture), []byte(`"cli_version":"0.169.0"`), []byte(`"cli_version":"0.170.0"`))
	if _, err := forkCodex(x, codexSession, Cut{Call: "call_mock_03_3"}, "x"); !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "0.170.0") {
		t.Errorf("Codex 0.170.0: %v, want ErrUnknownFormat naming the version", err)
	}
	if _, err := forkClaude(readFixture(t, codexFixture), claudeSession, Cut{Call: "call_mock_03_3"}, "x"); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("a Codex rollout read as Claude Code's: %v, want ErrUnknownFormat", err)
	}
}

// TestMissingCallOrSession: a call not in the session, and a session with no transcript.
func TestMissingCallOrSession(t *testing.T) {
	if _, err := forkClaude(readFixture(t, claudeFixture), claudeSession, Cut{Call: "toolu_nope"}, "x"); !errors.Is(err, ErrNoCall) || !strings.Contains(err.Error(), "toolu_nope") {
		t.Errorf("a call not in it: %v", err)
	}
	w := Where{Home: t.TempDir()}
	for _, client := range []string{ClaudeCode, Codex} {
		if _, err := Plan(w, client, "0123-4567", Cut{Call: "call_1"}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "0123-4567") {
			t.Errorf("%s, no transcript: %v", client, err)
		}
	}
	if _, err := Plan(w, "cursor", "abc", Cut{Call: "call_1"}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("cursor: %v, want ErrUnsupported", err)
	}
	if _, err := Plan(w, ClaudeCode, "../../etc/passwd", Cut{Call: "call_1"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a session id with a path in it: %v", err)
	}
}

// TestPlanAndWrite finds each fixture where its client keeps it (CLAUDE_CONFIG_DIR honoured),
// writes the fork beside it, leaves the original byte for byte, and never overwrites a fork.
func TestPlanAndWrite(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "claude-config")
	codexHome := filepath.Join(home, ".codex")
	claudeAt := filepath.Join(cfg, "projects", "-tmp-shop", claudeSession+".jsonl")
	codexAt := filepath.Join(codexHome, "sessions", "2026", "12", "02", filepath.Base(codexFixture))
	for src, dst := range map[string]string{claudeFixture: claudeAt, codexFixture: codexAt} {
		os.MkdirAll(filepath.Dir(dst), 0o700)
		if err := os.WriteFile(dst, readFixture(t, src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w := Where{Home: home, ClaudeConfigDir: cfg}
	for _, tc := range []struct{ client, session, call, orig, resume string }{
		{ClaudeCode, claudeSession, "call_mock_04_4", claudeAt, "claude --resume "},
		{Codex, codexSession, "call_mock_03_3", codexAt, "codex resume "},
	} {
		before := readFixture(t, tc.orig)
		f, err := Plan(w, tc.client, tc.session, Cut{Call: tc.call})
		if err != nil {
			t.Fatalf("%s: %v", tc.client, err)
		}
		if f.Original != tc.orig || f.Resume != tc.resume+f.ForkSession || len(f.SHA256) != 64 || len(f.OriginalSHA256) != 64 {
			t.Errorf("%s: plan %+v", tc.client, f)
		}
		if _, err := os.Stat(f.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: Plan wrote %s", tc.client, f.Path)
		}
		if err := f.Write(); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(f.Path)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: fork %s: %v, mode %v", tc.client, f.Path, err, st.Mode())
		}
		if tc.client == ClaudeCode && filepath.Dir(f.Path) != filepath.Dir(tc.orig) {
			t.Errorf("the Claude Code fork %s is not beside the original", f.Path)
		}
		if got := readFixture(t, f.Path); !bytes.Equal(got, f.data) {
			t.Errorf("%s: the fork's file differs from the plan", tc.client)
		}
		if !bytes.Equal(readFixture(t, tc.orig), before) {
			t.Errorf("%s: the original transcript changed", tc.client)
		}
		if err := f.Write(); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("%s: a second Write: %v, want a refusal", tc.client, err)
		}
		if tc.client == Codex {
			if got, err := CodexTranscript(w, f.ForkSession); err != nil || got != f.Path {
				t.Errorf("the Codex fork is not found by its id: %q, %v", got, err)
			}
		}
	}
}

// TestForkBeforePrompt cuts before the prompt that led to a call: in Claude Code's, a second
// prompt added to the real session; in Codex's, the session's only prompt, which leaves the
// client's own context alone.
func TestForkBeforePrompt(t *testing.T) {
	b := readFixture(t, claudeFixture)
	second := `{"type":"user","version":"2.1.328","sessionId":"` + claudeSession + `","uuid":"p2","parentUuid":"acaec728-0000","message":{"role":"user","content":"now add a login page"}}
{"type":"assistant","version":"2.1.328","sessionId":"` + claudeSession + `","uuid":"a2","parentUuid":"p2","message":{"id":"msg_p2","role":"assistant","content":[{"type":"tool_use","id":"call_p2","name":"Write","input":{}}]}}
`
	f, err := forkClaude(append(b, second...), claudeSession, Cut{Call: "call_p2", BeforePrompt: true}, "fork")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(f.data, []byte("call_mock_12_12")) || bytes.Contains(f.data, []byte("login page")) || f.DroppedMessages != 2 {
		t.Errorf("before the second prompt: dropped %d messages, %v; want the prompt and its call, the first prompt's work kept", f.DroppedMessages, f.DroppedCalls)
	}
	if f, err := forkClaude(b, claudeSession, Cut{Call: "call_mock_04_4", BeforePrompt: true}, "fork"); err != nil || f.KeptMessages != 0 || len(f.data) != 0 {
		t.Errorf("before the first prompt: %v, kept %d messages, %d bytes; want nothing kept", err, f.KeptMessages, len(f.data))
	}
	x, err := forkCodex(readFixture(t, codexFixture), codexSession, Cut{Call: "call_mock_03_3", BeforePrompt: true}, "fork")
	if err != nil {
		t.Fatal(err)
	}
	if ls := lines(x.data); len(ls) != 4 || bytes.Contains(x.data, []byte("bump the version")) || !bytes.Contains(x.data, []byte("<environment_context>")) {
		t.Errorf("Codex before its first prompt: %d lines; want session_meta, task_started and the client's two context messages", len(ls))
	}
}

// TestCodexPrompt: the person's prompt is told from Codex's own context by the kinds 0.169.0
// records, and by the text's leading tag where a line has none.
func TestCodexPrompt(t *testing.T) {
	for line, want := range map[string]bool{
		`{"payload":{"content":[{"text":"<b>bold</b> please"}],"internal_chat_message_metadata_passthrough":{"content_item_kinds":["user.text"]}}}`:               true,
		`{"payload":{"content":[{"text":"cwd is /x"}],"internal_chat_message_metadata_passthrough":{"content_item_kinds":["environments.environment_context"]}}}`: false,
		`{"payload":{"content":[{"text":"<environment_context>"}]}}`:                                                                                              false,
		`{"payload":{"content":[{"text":"bump it"}]}}`:                                                                                                            true,
		`not json`: false,
	} {
		if got := codexPrompt([]byte(line)); got != want {
			t.Errorf("codexPrompt(%s) = %v, want %v", line, got, want)
		}
	}
}

// TestReportedTranscript: a transcript the hooks reported is used as it is, even outside the
// config folder the search covers (a session started with another CLAUDE_CONFIG_DIR or
// CODEX_HOME), and a Codex fork goes under the reported rollout's home; a reported path that
// is not the client's file for that session, or is gone, falls back to the search.
func TestReportedTranscript(t *testing.T) {
	home, other := t.TempDir(), t.TempDir()
	claude := filepath.Join(other, "claude", "projects", "-p", claudeSession+".jsonl")
	codex := filepath.Join(other, "codex", "sessions", "2026", "12", "02", "rollout-2026-12-02T00-22-27-"+codexSession+".jsonl")
	for path, from := range map[string]string{claude: claudeFixture, codex: codexFixture} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, readFixture(t, from), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w := Where{Home: home, Reported: map[string]string{claudeSession: claude, codexSession: codex}}
	if p, err := ClaudeTranscript(w, claudeSession); err != nil || p != claude {
		t.Errorf("Claude Code, reported: %q, %v; want %s", p, err, claude)
	}
	f, err := Plan(w, Codex, codexSession, Cut{Call: "call_mock_03_3"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Original != codex || !strings.HasPrefix(f.Path, filepath.Join(other, "codex", "sessions")+string(filepath.Separator)) {
		t.Errorf("Codex, reported: read %s, fork at %s; want the reported rollout and a fork under its home", f.Original, f.Path)
	}
	// Not the session's file (another session's name, a relative path), or gone: the search,
	// which finds nothing in the empty home.
	for _, bad := range []string{filepath.Join(filepath.Dir(claude), "other.jsonl"), "-p/" + claudeSession + ".jsonl", filepath.Join(home, claudeSession+".jsonl")} {
		w.Reported[claudeSession] = bad
		if p, err := ClaudeTranscript(w, claudeSession); !errors.Is(err, ErrNotFound) {
			t.Errorf("reported %q: %q, %v; want the search's ErrNotFound", bad, p, err)
		}
	}
}
