package prompts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/snapshot"
)

// TestGroupCallsPerSession: each session's calls go under that session's latest earlier
// prompt; calls before any prompt are a group of their own; another session's prompts do not
// take them.
func TestGroupCallsPerSession(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ps := []Prompt{{Session: "a", Text: "one", Time: at(10)}, {Session: "b", Text: "two", Time: at(20)}, {Session: "a", Text: "three", Time: at(30)}}
	call := func(id, sess string, s int) snapshot.CallRecord {
		return snapshot.CallRecord{ToolCall: snapshot.ToolCall{ID: id, Session: sess}, Checkpoint: "c" + id, Time: at(s)}
	}
	sessions := []snapshot.Session{
		{ID: "a", Calls: []snapshot.CallRecord{call("a0", "a", 5), call("a1", "a", 15), call("a2", "a", 25), call("a3", "a", 35)}},
		{ID: "b", Calls: []snapshot.CallRecord{call("b1", "b", 21)}},
	}
	got := GroupCalls(ps, sessions)
	var lines []string
	for _, sg := range got {
		for _, g := range sg.Groups {
			var ids []string
			for _, c := range g.Calls {
				ids = append(ids, c.ID)
			}
			lines = append(lines, sg.Session+":"+string(rune('0'+g.N))+":"+strings.Join(ids, ","))
		}
	}
	if want := "a:0:a0 a:1:a1,a2 a:3:a3 b:2:b1"; strings.Join(lines, " ") != want {
		t.Errorf("groups %v, want %s", lines, want)
	}
	if _, c, err := FirstCall(ps, sessions, 3); err != nil || c.ID != "a3" {
		t.Errorf("FirstCall(3) = %v, %v", c.ID, err)
	}
	if _, _, err := FirstCall(ps, sessions, 4); err == nil || !strings.Contains(err.Error(), "no prompt 4") {
		t.Errorf("FirstCall(4): %v", err)
	}
	for _, bad := range []string{"prompt:", "prompt:0", "prompt:x", "prompt:-1"} {
		if _, ok, err := ParseRef(bad); !ok || err == nil {
			t.Errorf("ParseRef(%q) = %v, %v", bad, ok, err)
		}
	}
	if _, ok, _ := ParseRef("toolu_1"); ok {
		t.Errorf("a call id read as a prompt")
	}
}

// TestReadSkipsTornLine: a crash mid-append leaves a torn last line, which Read skips; no log
// is no prompts; a log that is not a regular file is an error.
func TestReadSkipsTornLine(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, File)
	if ps, err := Read(log); err != nil || ps != nil {
		t.Fatalf("no log: %v, %v", ps, err)
	}
	if err := Append(log, Prompt{Session: "s", Text: "hi", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"session":"s","text":"cut`)
	f.Close()
	ps, err := Read(log)
	if err != nil || len(ps) != 1 || ps[0].Text != "hi" {
		t.Errorf("Read = %+v, %v", ps, err)
	}
	if st, _ := os.Stat(log); st.Mode().Perm() != 0o600 {
		t.Errorf("the log is %v, want 0600: prompts are the user's", st.Mode())
	}
	os.Remove(log)
	os.Mkdir(log, 0o700)
	if _, err := Read(log); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("a folder as the log: %v", err)
	}
}

// FuzzClean: a prompt is outside input; whatever it holds, what is kept is valid UTF-8, on one
// line, within the limit.
func FuzzClean(f *testing.F) {
	f.Add("Add a login page")
	f.Add("export API_KEY=abc\n\tcurl -u alice:hunter2 https://x/?token=y")
	f.Add(strings.Repeat("é", 300))
	f.Add("\xff\xfe bad bytes")
	f.Fuzz(func(t *testing.T, text string) {
		p := Clean(Prompt{Text: text, Session: text, Transcript: text})
		if !utf8.ValidString(p.Text) || len(p.Text) > maxText || strings.ContainsAny(p.Text, "\n\r") {
			t.Fatalf("Clean(%q).Text = %q", text, p.Text)
		}
		if p.Transcript != "" && (p.Transcript != text || len(p.Transcript) > maxPath || strings.ContainsAny(p.Transcript, "\n\r\x00")) {
			t.Fatalf("Clean(%q).Transcript = %q: kept whole or dropped", text, p.Transcript)
		}
	})
}

// TestPromptOnlySession: a session with prompts and no checkpointed calls (Gemini CLI's) is a
// group of its own, after the sessions with calls; its transcript path is kept for the
// conversation rewind, and a path that cannot be one is dropped, not cut.
func TestPromptOnlySession(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	ps := []Prompt{
		{Session: "g", Agent: "gemini-cli", Text: "hi", Time: t0, Transcript: "/h/.gemini/tmp/p/chats/session-g.jsonl"},
		{Session: "a", Text: "one", Time: t0.Add(time.Second), Transcript: "/t/a.jsonl"},
		{Session: "a", Text: "two", Time: t0.Add(2 * time.Second), Transcript: "/t/a2.jsonl"},
	}
	got := GroupCalls(ps, []snapshot.Session{{ID: "a", Calls: []snapshot.CallRecord{{ToolCall: snapshot.ToolCall{ID: "c1", Session: "a"}, Time: t0.Add(3 * time.Second)}}}})
	if len(got) != 2 || got[0].Session != "a" || got[1].Session != "g" || got[1].Agent != "gemini-cli" || len(got[1].Groups) != 1 || got[1].Groups[0].N != 1 || len(got[1].Groups[0].Calls) != 0 {
		t.Errorf("groups %+v: want session a, then g with prompt 1 and no calls", got)
	}
	if tr := Transcripts(ps); tr["a"] != "/t/a2.jsonl" || tr["g"] != ps[0].Transcript || len(tr) != 2 {
		t.Errorf("Transcripts = %v: want each session's latest", tr)
	}
	for _, bad := range []string{strings.Repeat("/x", 3000), "/a\nb", "/a\xffb"} {
		if p := Clean(Prompt{Transcript: bad}); p.Transcript != "" {
			t.Errorf("Clean kept transcript %q", p.Transcript)
		}
	}
	if p := Clean(Prompt{Transcript: "/a  b/c.jsonl"}); p.Transcript != "/a  b/c.jsonl" {
		t.Errorf("Clean changed a path with spaces: %q", p.Transcript)
	}
}

// TestPrune: gc's retention removed the checkpoints of a session's first prompt: Prune drops
// that prompt, keeps a later one that changed nothing, drops a call-less session's prompt
// older than the retention and keeps a recent one; the numbers stay (prompt:N names the same
// prompt), a prompt appended after is numbered after the last, and a second Prune writes
// nothing.
func TestPrune(t *testing.T) {
	log := filepath.Join(t.TempDir(), File)
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	for _, p := range []Prompt{
		{Session: "a", Text: "one", Time: at(-100)},                     // 1: its call is gone
		{Session: "g", Text: "old", Time: now.Add(-8 * 24 * time.Hour)}, // 2: no calls, older than 7 days
		{Session: "a", Text: "two", Time: at(-80)},                      // 3: a call kept
		{Session: "a", Text: "nothing", Time: at(-60)},                  // 4: changed nothing, after the oldest kept call
		{Session: "g", Text: "new", Time: now.Add(-24 * time.Hour)},     // 5: no calls, recent
		{Session: "a", Text: "three", Time: at(-40)},                    // 6: a call kept
	} {
		if err := Append(log, p); err != nil {
			t.Fatal(err)
		}
	}
	call := func(id string, s int) snapshot.CallRecord {
		return snapshot.CallRecord{ToolCall: snapshot.ToolCall{ID: id, Session: "a"}, Checkpoint: "c" + id, Time: at(s)}
	}
	sessions := []snapshot.Session{{ID: "a", Calls: []snapshot.CallRecord{call("t3", -70), call("t6", -30)}}}
	removed, err := Prune(log, sessions, 7*24*time.Hour, now)
	if err != nil || removed != 2 {
		t.Fatalf("Prune removed %d, %v; want 2", removed, err)
	}
	if err := Append(log, Prompt{Session: "a", Text: "four", Time: at(-10)}); err != nil {
		t.Fatal(err)
	}
	ps, err := Read(log)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%d:%s", p.N, p.Text))
	}
	if want := "3:two 4:nothing 5:new 6:three 7:four"; strings.Join(got, " ") != want {
		t.Errorf("after Prune: %v, want %s", got, want)
	}
	if _, c, err := FirstCall(ps, sessions, 6); err != nil || c.ID != "t6" {
		t.Errorf("prompt:6 after Prune: %s, %v; want t6", c.ID, err)
	}
	if _, _, err := FirstCall(ps, sessions, 1); err == nil || !strings.Contains(err.Error(), "holds prompts 3 to 7") {
		t.Errorf("prompt:1 after Prune: %v", err)
	}
	info, _ := os.Stat(log)
	if removed, err := Prune(log, sessions, 7*24*time.Hour, now); err != nil || removed != 0 {
		t.Errorf("a second Prune removed %d, %v", removed, err)
	}
	if again, _ := os.Stat(log); !again.ModTime().Equal(info.ModTime()) || info.Mode().Perm() != 0o600 {
		t.Errorf("a Prune that removes nothing rewrote the log, or its mode is %v", info.Mode())
	}
}

// TestPruneKeepsConcurrentAppends: prompts appended while Prune rewrites the log are all
// kept (the lock: appends share it, Prune holds it alone).
func TestPruneKeepsConcurrentAppends(t *testing.T) {
	log := filepath.Join(t.TempDir(), File)
	now := time.Now()
	if err := Append(log, Prompt{Session: "g", Text: "old", Time: now.Add(-30 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := Append(log, Prompt{Session: "g", Text: fmt.Sprint("p", i), Time: now}); err != nil {
				t.Error(err)
			}
		})
	}
	for range 5 {
		wg.Go(func() {
			if _, err := Prune(log, nil, time.Hour, now); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ps, err := Read(log)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, p := range ps {
		kept[p.Text] = true
	}
	for i := range 20 {
		if !kept[fmt.Sprint("p", i)] {
			t.Errorf("prompt p%d lost", i)
		}
	}
}
