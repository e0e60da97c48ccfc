package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/internal/jsonl"
	"github.com/agent-rewind/rewind/internal/regular"

	"github.com/agent-rewind/rewind/internal/durable"
)

// Automatic checkpoints: an agent's hook takes one before each tool call that can change files
// (FORMAT.md, "Tool calls"). When nothing changed since the current position no checkpoint is
// written, yet the call must still be found ("rewind to before tool call X"), so every call is
// also a line of the calls log naming the checkpoint that holds the state before it.

// ToolCall is the agent tool call an automatic checkpoint was taken before.
type ToolCall struct {
	ID      string `json:"id"`                // the client's id of the call (Claude Code's tool_use_id)
	Tool    string `json:"tool"`              // the tool's name: Bash, Edit, mcp__server__tool, ...
	Summary string `json:"summary,omitempty"` // a short form of the command or path
	Session string `json:"session,omitempty"` // the agent session the call belongs to
	Agent   string `json:"agent,omitempty"`   // the client: claude-code, codex, cursor, ...
}

// Limits on a ToolCall's fields: they come from an agent's hook input.
const (
	maxCallID      = 256
	maxCallField   = 256
	maxCallSummary = 120
)

// CallRecord is one line of the calls log: a tool call and the checkpoint holding the workspace
// as it was before the call.
type CallRecord struct {
	ToolCall
	Checkpoint string    `json:"checkpoint"`
	Reused     bool      `json:"reused,omitempty"` // the workspace equalled that checkpoint: none was written
	Time       time.Time `json:"time"`
}

// Session is one agent session's tool calls, oldest first, as Timeline groups them.
type Session struct {
	ID    string       `json:"id"` // "" for calls whose client names no session
	Agent string       `json:"agent,omitempty"`
	Calls []CallRecord `json:"calls"`
}

// callsFile is the calls log, one JSON CallRecord a line, appended to.
const callsFile = "calls.jsonl"

// ErrBadToolCall reports a ToolCall AutoCheckpoint cannot label a checkpoint with.
var ErrBadToolCall = errors.New("bad tool call")

// AutoCheckpoint takes the automatic checkpoint before call: like Checkpoint, except that a
// workspace equal to the current position writes no checkpoint (Reused is then set and the
// result is that position), and that the call is appended to the calls log either way, so that
// Resolve finds the state before it by the call's id. The summary is shortened to 120
// characters. hint, if not nil, is a change watcher's (see CheckpointChanged).
func (s *Store) AutoCheckpoint(ctx context.Context, call ToolCall, hint *Changed) (*CheckpointResult, error) {
	start := time.Now()
	call, err := cleanCall(call)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lockRecovered(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	label := call.Tool
	if call.Summary != "" {
		label += ": " + call.Summary
	}
	res, _, err := s.checkpointLocked(ctx, label, KindAuto, true, hint, &call)
	if res == nil {
		return nil, err
	}
	res.Elapsed = Duration(time.Since(start))
	if !res.Reused {
		return res, err // a new checkpoint: checkpointLocked noted the call while recording it
	}
	if last, ok := s.lastCall(); ok && last.ID == call.ID && last.Session == call.Session && last.Checkpoint == res.ID {
		return res, err // the same call again (a hook configured twice, a retry): noted already
	}
	if aerr := s.appendCall(CallRecord{ToolCall: call, Checkpoint: res.ID, Reused: res.Reused, Time: time.Now().UTC()}); aerr != nil && err == nil {
		err = fmt.Errorf("checkpoint %s taken, but the tool call %s could not be noted in %s: %w", res.ID, call.ID, callsFile, aerr)
	}
	return res, err
}

// cleanCall checks a tool call's id and tool, and shortens the other fields to their limits.
func cleanCall(c ToolCall) (ToolCall, error) {
	if c.ID == "" || len(c.ID) > maxCallID || !utf8.ValidString(c.ID) || strings.ContainsAny(c.ID, "\n\r") {
		return c, fmt.Errorf("%w: id %q: give the client's tool call id (1 to %d characters, one line)", ErrBadToolCall, shorten(c.ID, 40), maxCallID)
	}
	if c.Tool == "" {
		return c, fmt.Errorf("%w: call %s names no tool", ErrBadToolCall, c.ID)
	}
	c.Tool = shorten(c.Tool, maxCallField)
	c.Session = shorten(c.Session, maxCallField)
	c.Agent = shorten(c.Agent, maxCallField)
	c.Summary = shorten(redactSecrets(c.Summary), maxCallSummary) // redacted whole, then cut
	return c, nil
}

// shorten cuts s to at most n bytes of valid UTF-8, ending in "…" when cut.
func shorten(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// appendCall appends one record to the calls log and syncs it, or has Options.SyncLater sync
// it. A crash can tear only the last line, which readers skip: the checkpoint itself is already
// durable.
func (s *Store) appendCall(r CallRecord) error {
	b, _ := json.Marshal(r)
	path := filepath.Join(s.state, callsFile)
	f, err := regular.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if s.opts.SyncLater != nil {
		s.opts.SyncLater(path)
		return f.Close()
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// lastCall returns the last record of the calls log, reading only its end.
func (s *Store) lastCall() (CallRecord, bool) {
	f, err := regular.Open(filepath.Join(s.state, callsFile))
	if err != nil {
		return CallRecord{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return CallRecord{}, false
	}
	n := min(st.Size(), 4<<10)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, st.Size()-n); err != nil {
		return CallRecord{}, false
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	}
	var r CallRecord
	if json.Unmarshal(buf, &r) != nil {
		return CallRecord{}, false
	}
	return r, true
}

// readCalls reads the calls log, oldest first. Lines that do not parse (a torn last line) are
// skipped.
func (s *Store) readCalls() ([]CallRecord, error) {
	return jsonl.Read(filepath.Join(s.state, callsFile), func(r *CallRecord) bool { return r.ID != "" && validID(r.Checkpoint) })
}

// writeCalls replaces the calls log with recs (GC drops the calls of removed checkpoints).
func (s *Store) writeCalls(recs []CallRecord) error {
	var buf bytes.Buffer
	for _, r := range recs {
		b, _ := json.Marshal(r)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return durable.WriteFile(filepath.Join(s.state, callsFile), buf.Bytes(), 0o600)
}

// dropCalls removes from the calls log the calls before the removed checkpoints.
func (s *Store) dropCalls(removed []string) error {
	recs, err := s.readCalls()
	if err != nil || len(recs) == 0 {
		return err
	}
	gone := map[string]bool{}
	for _, id := range removed {
		gone[id] = true
	}
	keep := slices.DeleteFunc(slices.Clone(recs), func(r CallRecord) bool { return gone[r.Checkpoint] })
	if len(keep) == len(recs) {
		return nil
	}
	return s.writeCalls(keep)
}

// groupSessions groups the calls whose checkpoint exists by session, sessions in the order of
// their first call.
func groupSessions(recs []CallRecord, exists map[string]bool) []Session {
	var out []Session
	at := map[string]int{}
	for _, r := range recs {
		if !exists[r.Checkpoint] {
			continue
		}
		i, ok := at[r.Session]
		if !ok {
			i = len(out)
			at[r.Session] = i
			out = append(out, Session{ID: r.Session, Agent: r.Agent})
		}
		out[i].Calls = append(out[i].Calls, r)
	}
	return out
}

// resolveCall returns the checkpoint holding the state before the tool call ref (its newest
// record, should a client reuse an id), or ErrNotFound.
func (s *Store) resolveCall(ref string) (string, error) {
	recs, err := s.readCalls()
	if err != nil {
		return "", err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].ID == ref {
			if _, err := os.Lstat(filepath.Join(s.state, "checkpoints", recs[i].Checkpoint)); err != nil {
				return "", fmt.Errorf("%w: tool call %s was before checkpoint %s, which gc removed", ErrNotFound, ref, recs[i].Checkpoint)
			}
			return recs[i].Checkpoint, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not a checkpoint id (%d to %d hex digits), nor the id of a tool call that had an automatic checkpoint (see agent-rewind list)", ErrNotFound, shorten(ref, 80), minPrefix, IDLen)
}
