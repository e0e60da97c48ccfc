package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
)

// Clients whose conversations can be forked, as the calls log names them (barrier.Agent).
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
)

// Errors a caller tells apart. Every error also names the value and what to do.
var (
	// ErrUnsupported: the client keeps no transcript this package can fork.
	ErrUnsupported = errors.New("conversation rewind not supported")
	// ErrNotFound: the session's transcript is not where the client keeps it.
	ErrNotFound = errors.New("transcript not found")
	// ErrUnknownFormat: the transcript is of a client version whose format is not known.
	ErrUnknownFormat = errors.New("unknown transcript format")
	// ErrNoCall: the tool call is not in the transcript.
	ErrNoCall = errors.New("tool call not in the transcript")
)

// maxTranscript bounds what is read of a transcript: a session of a few thousand turns is
// tens of megabytes; beyond this the file is refused, not read in part.
const maxTranscript = 512 << 20

// Where tells Plan where the clients keep their sessions: the user's home and the variables
// that move them (CLAUDE_CONFIG_DIR, CODEX_HOME), as the client would read them.
type Where struct {
	Home            string
	ClaudeConfigDir string // $CLAUDE_CONFIG_DIR; "" means <home>/.claude
	CodexHome       string // $CODEX_HOME; "" means <home>/.codex
	// Reported maps a session id to the transcript path its client's hooks reported
	// (transcript_path, kept in the prompt log): tried first, so a session started with
	// another config folder is found too; the search by session id is the fallback.
	Reported map[string]string
}

// reported returns the transcript path reported for session when it is an absolute path to
// a regular file whose name is the client's for that session (ok says so), else "".
func (w Where) reported(session string, ok func(name string) bool) string {
	p := w.Reported[session]
	if p == "" || !filepath.IsAbs(p) || !ok(filepath.Base(p)) {
		return ""
	}
	if info, err := os.Lstat(p); err != nil || !info.Mode().IsRegular() {
		return ""
	}
	return p
}

// FromEnv is Where as this process's environment says.
func FromEnv() (Where, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Where{}, fmt.Errorf("find the agent's sessions: no home folder: %w", err)
	}
	return Where{Home: home, ClaudeConfigDir: os.Getenv("CLAUDE_CONFIG_DIR"), CodexHome: os.Getenv("CODEX_HOME")}, nil
}

// Fork is a session's conversation cut just before one tool call, ready to be written as a new
// session of the same client.
type Fork struct {
	Client          string   `json:"client"`
	Session         string   `json:"session"`  // the original session's id
	Original        string   `json:"original"` // its transcript
	OriginalSHA256  string   `json:"originalSha256"`
	Call            string   `json:"call"`                   // the tool call the fork ends before
	BeforePrompt    bool     `json:"beforePrompt,omitempty"` // before the prompt that led to the call, rather
	ForkSession     string   `json:"forkSession"`
	Path            string   `json:"path"`   // the fork's transcript, once written
	SHA256          string   `json:"sha256"` // of the fork's transcript
	KeptMessages    int      `json:"keptMessages"`
	DroppedMessages int      `json:"droppedMessages"` // conversation messages (model turns, tool results, prompts) after the cut
	DroppedCalls    []string `json:"droppedCalls"`    // the tool calls after the cut, the call itself first
	// Empty: the fork would hold no conversation (before a session's first prompt): nothing is
	// written, and Resume starts a new session instead.
	Empty  bool   `json:"empty,omitempty"`
	Resume string `json:"resume"` // the command that resumes the fork
	data   []byte
}

// Cut is where a fork ends: just before tool call Call, or with BeforePrompt just before the
// person's prompt that led to it (the conversation as it was before that prompt).
type Cut struct {
	Call         string
	BeforePrompt bool
}

// Plan finds the transcript of client's session, checks its format and cuts it where cut says,
// without writing anything. A client without a forker,
// a transcript that cannot be found or read, a format it does not know or a call not in it
// are errors; nothing is written then.
func Plan(w Where, client, session string, cut Cut) (*Fork, error) {
	call := cut.Call
	if session == "" {
		return nil, fmt.Errorf("%w: the %s hook named no session for call %s, so its conversation cannot be found", ErrNotFound, orUnknown(client), call)
	}
	if !safeID(session) {
		return nil, fmt.Errorf("%w: session id %q is not a client's session id (letters, digits, - and _)", ErrNotFound, short(session))
	}
	var f *Fork
	var err error
	switch client {
	case ClaudeCode:
		f, err = planClaude(w, session, cut)
	case Codex:
		f, err = planCodex(w, session, cut)
	default:
		return nil, fmt.Errorf("%w for %s: only Claude Code's and Codex CLI's conversations can be rewound; rewind the files alone (without --conversation)", ErrUnsupported, orUnknown(client))
	}
	if err != nil {
		return nil, err
	}
	f.Client, f.Session, f.Call, f.BeforePrompt = client, session, call, cut.BeforePrompt
	if f.KeptMessages == 0 {
		f.Empty, f.Path, f.ForkSession, f.Resume = true, "", "", map[string]string{ClaudeCode: "claude", Codex: "codex"}[client]
	}
	sum := sha256.Sum256(f.data)
	f.SHA256 = hex.EncodeToString(sum[:])
	return f, nil
}

// Write writes the fork as a new transcript, never replacing a file (created exclusively,
// durably, 0600: readable by the user alone, like the client's own).
func (f *Fork) Write() error {
	if f.Empty {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return fmt.Errorf("write the forked conversation: %w", err)
	}
	created, err := durable.CreateExclusive(f.Path, f.data, 0o600)
	if err != nil {
		return fmt.Errorf("write the forked conversation %s: %w", f.Path, err)
	}
	if !created {
		return fmt.Errorf("write the forked conversation: %s already exists; run the command again for a new session id", f.Path)
	}
	return nil
}

// forkFile reads the transcript at path and forks it with fork, naming the file in errors.
func forkFile(path string, fork func([]byte) (*Fork, error)) (*Fork, error) {
	b, sum, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", ErrNotFound, path, err)
	}
	f, err := fork(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Original, f.OriginalSHA256 = path, sum
	return f, nil
}

// read reads a transcript whole, refusing what is not a regular file or is too large.
func read(path string) ([]byte, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	if st.Size() > maxTranscript {
		return nil, "", fmt.Errorf("transcript %s is %d bytes, more than the %d read", path, st.Size(), maxTranscript)
	}
	b, err := regular.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

// findOne returns the one file matching pattern, or ErrNotFound naming where it looked.
func findOne(pattern, what string) (string, error) {
	m, err := filepath.Glob(pattern)
	if err != nil {
		return "", err
	}
	var files []string
	for _, p := range m {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			files = append(files, p)
		}
	}
	switch len(files) {
	case 0:
		return "", fmt.Errorf("%w: no %s at %s: was the session run as this user, with the same config folder?", ErrNotFound, what, pattern)
	case 1:
		return files[0], nil
	}
	return "", fmt.Errorf("%w: %d files match %s (%s): remove the copies", ErrNotFound, len(files), pattern, strings.Join(files, ", "))
}

// lines splits a JSONL file into its lines, without their ends; a last line without one is
// kept (a client killed mid-write); empty lines are dropped.
func lines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i], b[i+1:]
		}
		if l = bytes.TrimSuffix(l, []byte("\r")); len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// replaceID replaces every JSON string equal to old by new in line: only whole string
// values match ("old", with its quotes), never the id inside a longer text.
func replaceID(line []byte, old, new string) []byte {
	return bytes.ReplaceAll(line, []byte(`"`+old+`"`), []byte(`"`+new+`"`))
}

// safeID reports whether id can be a session id in a file name.
func safeID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed client"
	}
	return s
}

// short cuts s for a message.
func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
