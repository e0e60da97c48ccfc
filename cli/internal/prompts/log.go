package prompts

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/jsonl"
	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/snapshot"
)

// File is the prompt log's name in the store.
const File = "prompts.jsonl"

// maxText is how much of a prompt is kept, after redaction.
const maxText = 200

// Prompt is one line of the log.
type Prompt struct {
	// N is the prompt's number (list's "prompt N"). Appended lines leave it out: a line
	// without one is numbered one more than the line before. Prune writes it on every line it
	// keeps, so that the numbers stay as they were after older prompts are gone.
	N       int       `json:"n,omitempty"`
	Session string    `json:"session"`
	Agent   string    `json:"agent,omitempty"`
	Turn    string    `json:"turn,omitempty"` // the client's id of the turn, where it has one (Codex's turn_id)
	Text    string    `json:"text"`
	Time    time.Time `json:"time"`
	// Transcript is the session's transcript as the hook input named it (transcript_path), so
	// a conversation rewind finds it exactly; "" in older logs and where the client names none.
	Transcript string `json:"transcript,omitempty"`
}

// maxPath bounds a transcript path kept: a longer one is dropped, not cut (a cut path names
// another file).
const maxPath = 4096

// Clean redacts p's text and cuts its fields to their limits.
func Clean(p Prompt) Prompt {
	p.Text = shorten(snapshot.RedactSecrets(p.Text), maxText)
	p.Session = shorten(p.Session, 256)
	p.Agent = shorten(p.Agent, 64)
	p.Turn = shorten(p.Turn, 256)
	if len(p.Transcript) > maxPath || !utf8.ValidString(p.Transcript) || strings.ContainsAny(p.Transcript, "\n\r\x00") {
		p.Transcript = ""
	}
	return p
}

// Append cleans p and appends it to the log at path, synced before it returns. Hooks of
// several sessions may append at once: each line is one write(2) to an O_APPEND file.
func Append(path string, p Prompt) error {
	b, err := json.Marshal(Clean(p))
	if err != nil {
		return err
	}
	lock, err := lockfile.Open(lockPath(path), lockfile.Shared) // Prune holds it alone
	if err != nil {
		return err
	}
	defer lock.Close()
	f, err := durable.OpenAppend(path) // a new log's name is durable before its first line
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// Transcripts returns, for each session of ps, the latest transcript path its hooks reported.
func Transcripts(ps []Prompt) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		if p.Transcript != "" {
			out[p.Session] = p.Transcript
		}
	}
	return out
}

// Read returns the log at path, oldest first, each prompt numbered (N); no log is no prompts.
// Lines that do not parse (a torn last line) are skipped.
func Read(path string) ([]Prompt, error) {
	ps, err := jsonl.Read(path, func(p *Prompt) bool { return !p.Time.IsZero() })
	number(ps)
	return ps, err
}

// number gives each prompt of ps its number, in place: its N when it is after the one before
// (as Prune writes them), else one more than the one before (as Append leaves them).
func number(ps []Prompt) {
	next := 1
	for i := range ps {
		if ps[i].N < next {
			ps[i].N = next
		}
		next = ps[i].N + 1
	}
}

// shorten cuts s to at most n bytes of valid UTF-8 on one line, ending in "…" when cut.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "?")), " ")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
