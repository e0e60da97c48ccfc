package transcript

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Codex CLI's rollout file: one JSON object a line, {"timestamp", "type", "payload"}, in
// <CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<local time>-<session id>.jsonl. The first line is
// the session_meta, whose payload holds the session's id and the cli_version that wrote it;
// the conversation is the response_item lines (messages, reasoning, function_call and its
// function_call_output, tool_search_call, ...), a call's items naming it in call_id; event_msg,
// turn_context and the others are the client's own records, which name the session as
// session_id or thread_id.
//
// The fork keeps every line before the first response_item of the call (and before the
// reasoning items the model produced with it, which the Responses API refuses without the
// item that follows them), with the session id replaced, in a new rollout file of today.

// codexVersions are the versions whose rollout files were read from real sessions
// (tools/agents/testdata/transcripts/codex-<version>).
var codexVersions = []string{"0.169.0"}

type codexLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type       string `json:"type"`
		ID         string `json:"id"`
		CLIVersion string `json:"cli_version"`
		CallID     string `json:"call_id"`
		Role       string `json:"role"`
	} `json:"payload"`
}

// CodexTranscript is where Codex keeps session's rollout file.
func CodexTranscript(w Where, session string) (string, error) {
	if p := w.reported(session, func(name string) bool {
		return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, "-"+session+".jsonl")
	}); p != "" {
		return p, nil
	}
	return findOne(filepath.Join(codexHome(w), "sessions", "*", "*", "*", "rollout-*-"+session+".jsonl"), "Codex rollout file of session "+session)
}

func codexHome(w Where) string {
	if w.CodexHome != "" {
		return w.CodexHome
	}
	return filepath.Join(w.Home, ".codex")
}

func planCodex(w Where, session string, cut Cut) (*Fork, error) {
	path, err := CodexTranscript(w, session)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	f, err := forkFile(path, func(b []byte) (*Fork, error) { return forkCodex(b, session, cut, newUUIDv7(now)) })
	if err != nil {
		return nil, err
	}
	home := codexHome(w)
	// A rollout reported under another CODEX_HOME (<home>/sessions/YYYY/MM/DD/): the fork goes
	// beside it, where that Codex looks.
	if sessions := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(path)))); filepath.Base(sessions) == "sessions" {
		home = filepath.Dir(sessions)
	}
	f.Path = filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"),
		"rollout-"+now.Format("2006-01-02T15-04-05")+"-"+f.ForkSession+".jsonl")
	return f, nil
}

// forkCodex cuts rollout b of session as cut says, as session fork.
func forkCodex(b []byte, session string, at Cut, fork string) (*Fork, error) {
	call := at.Call
	ls := lines(b)
	parsed := make([]codexLine, len(ls))
	for i, l := range ls {
		if err := json.Unmarshal(l, &parsed[i]); err != nil {
			if i == len(ls)-1 && i > 0 {
				ls, parsed = ls[:i], parsed[:i] // a torn last line
				break
			}
			return nil, fmt.Errorf("%w: line %d is not JSON (%v): not a Codex rollout file", ErrUnknownFormat, i+1, err)
		}
	}
	if len(parsed) == 0 || parsed[0].Type != "session_meta" {
		return nil, fmt.Errorf("%w: the first line is not a session_meta: not a Codex rollout file", ErrUnknownFormat)
	}
	meta := parsed[0].Payload
	if !slices.Contains(codexVersions, meta.CLIVersion) {
		return nil, fmt.Errorf("%w: written by Codex CLI %q, whose rollout format is not known (known: %v); rewind the files alone (without --conversation)", ErrUnknownFormat, meta.CLIVersion, codexVersions)
	}
	if meta.ID != session {
		return nil, fmt.Errorf("%w: its session_meta names session %q, not %s", ErrUnknownFormat, short(meta.ID), session)
	}
	cut := slices.IndexFunc(parsed, func(p codexLine) bool { return p.Type == "response_item" && p.Payload.CallID == call })
	if cut < 0 {
		return nil, fmt.Errorf("%w: session %s has no tool call %s (the call may be of another session, or the client did not save it)", ErrNoCall, session, call)
	}
	for i := cut - 1; i > 0; i-- {
		if parsed[i].Type != "response_item" {
			continue
		}
		if parsed[i].Payload.Type != "reasoning" {
			break
		}
		cut = i
	}
	if at.BeforePrompt {
		// Back to the person's prompt (a user message that is not the client's own context),
		// and past the records that opened its turn.
		for cut > 1 && !(parsed[cut].Type == "response_item" && parsed[cut].Payload.Type == "message" && parsed[cut].Payload.Role == "user" && codexPrompt(ls[cut])) {
			cut--
		}
		for cut > 1 && parsed[cut-1].Type != "response_item" {
			cut--
		}
	}
	f := &Fork{ForkSession: fork, Resume: "codex resume " + fork}
	var out []byte
	for i, l := range ls[:cut] {
		if parsed[i].Type == "response_item" {
			f.KeptMessages++
		}
		out = append(append(out, replaceID(l, session, fork)...), '\n')
	}
	for _, p := range parsed[cut:] {
		if p.Type != "response_item" {
			continue
		}
		f.DroppedMessages++
		if c := p.Payload.CallID; c != "" && !slices.Contains(f.DroppedCalls, c) {
			f.DroppedCalls = append(f.DroppedCalls, c)
		}
	}
	f.data = out
	return f, nil
}

// codexPrompt reports whether a user message line is the person's prompt rather than context
// Codex adds itself: 0.169.0 marks each message's kinds (content_item_kinds "user.text" for a
// prompt, "environments.environment_context", ...); without them, its context is the text that
// starts with a tag such as <environment_context>.
func codexPrompt(line []byte) bool {
	var l struct {
		Payload struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Meta *struct {
				Kinds []string `json:"content_item_kinds"`
			} `json:"internal_chat_message_metadata_passthrough"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &l) != nil {
		return false
	}
	if m := l.Payload.Meta; m != nil && len(m.Kinds) > 0 {
		return slices.Contains(m.Kinds, "user.text")
	}
	return len(l.Payload.Content) > 0 && !strings.HasPrefix(strings.TrimSpace(l.Payload.Content[0].Text), "<")
}
