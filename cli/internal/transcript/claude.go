package transcript

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
)

// Claude Code's session transcript: one JSON object a line, appended as the session runs, in
// <config folder>/projects/<the project folder, / and . as ->/<session id>.jsonl. Conversation
// lines (type "user", "assistant", "attachment", "system") carry the client's version, the
// sessionId and a uuid chained by parentUuid; an assistant message is written as one line per
// content block, all with the same message.id, a tool_use block holding the call's id. Other
// lines (queue-operation, last-prompt, api-request, ...) carry the sessionId at most.
//
// The fork keeps every line before the first line of the assistant message that holds the
// call, with the session id replaced, so the conversation's last turn is the one before the
// model decided on that call. A last-prompt line whose leafUuid the fork cut off is dropped.

// claudeVersions are the versions whose transcripts were read from real sessions
// (tools/agents/testdata/transcripts/claude-code-<version>).
var claudeVersions = []string{"2.1.328"}

// claudeLine is what the forker reads of a line.
type claudeLine struct {
	Type      string `json:"type"`
	Version   string `json:"version"`
	SessionID string `json:"sessionId"`
	UUID      string `json:"uuid"`
	LeafUUID  string `json:"leafUuid"`
	Message   *struct {
		ID      string          `json:"id"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// block is a message content block: a tool_use names the call in id, a tool_result in
// tool_use_id.
type block struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
}

// ClaudeTranscript is where Claude Code keeps session's transcript.
func ClaudeTranscript(w Where, session string) (string, error) {
	dir := w.ClaudeConfigDir
	if dir == "" {
		dir = filepath.Join(w.Home, ".claude")
	}
	if p := w.reported(session, func(name string) bool { return name == session+".jsonl" }); p != "" {
		return p, nil
	}
	// The folder's name encodes the project's path, in a way that changed between versions:
	// the session id is unique, so it is looked for in every project's folder.
	return findOne(filepath.Join(dir, "projects", "*", session+".jsonl"), "Claude Code transcript of session "+session)
}

func planClaude(w Where, session string, cut Cut) (*Fork, error) {
	path, err := ClaudeTranscript(w, session)
	if err != nil {
		return nil, err
	}
	f, err := forkFile(path, func(b []byte) (*Fork, error) { return forkClaude(b, session, cut, newUUIDv4()) })
	if err != nil {
		return nil, err
	}
	f.Path = filepath.Join(filepath.Dir(path), f.ForkSession+".jsonl")
	return f, nil
}

// forkClaude cuts transcript b of session as cut says, as session fork.
func forkClaude(b []byte, session string, at Cut, fork string) (*Fork, error) {
	call := at.Call
	ls := lines(b)
	parsed := make([]claudeLine, len(ls))
	versioned := false
	cut := -1
	for i, l := range ls {
		if err := json.Unmarshal(l, &parsed[i]); err != nil {
			if i == len(ls)-1 {
				ls, parsed = ls[:i], parsed[:i] // a torn last line: the client died writing it
				break
			}
			return nil, fmt.Errorf("%w: line %d is not JSON (%v): not a Claude Code transcript", ErrUnknownFormat, i+1, err)
		}
		p := parsed[i]
		if p.Version != "" {
			if !slices.Contains(claudeVersions, p.Version) {
				return nil, fmt.Errorf("%w: line %d was written by Claude Code %s, whose transcript format is not known (known: %v); rewind the files alone (without --conversation)", ErrUnknownFormat, i+1, p.Version, claudeVersions)
			}
			versioned = true
		}
		if p.SessionID != "" && p.SessionID != session {
			return nil, fmt.Errorf("%w: line %d belongs to session %s, not %s", ErrUnknownFormat, i+1, p.SessionID, session)
		}
		if cut < 0 && p.Type == "assistant" && p.Message != nil && slices.ContainsFunc(blocks(p.Message.Content), func(b block) bool { return b.Type == "tool_use" && b.ID == call }) {
			cut = i
			for cut > 0 && parsed[cut-1].Type == "assistant" && parsed[cut-1].Message != nil && parsed[cut-1].Message.ID == p.Message.ID && p.Message.ID != "" {
				cut-- // the same assistant message's earlier blocks (its text, a parallel call)
			}
		}
	}
	if !versioned {
		return nil, fmt.Errorf("%w: no line names the Claude Code version that wrote it: not a Claude Code %v transcript", ErrUnknownFormat, claudeVersions)
	}
	if cut < 0 {
		return nil, fmt.Errorf("%w: session %s has no tool call %s (the call may be of another session, or the client did not save it)", ErrNoCall, session, call)
	}
	if at.BeforePrompt {
		// Back to the prompt the person typed (a user message whose content is text, not
		// tool results), and the queue lines that carried it in.
		for cut > 0 && !(parsed[cut].Type == "user" && parsed[cut].Message != nil && isText(parsed[cut].Message.Content)) {
			cut--
		}
		for cut > 0 && parsed[cut-1].Type == "queue-operation" {
			cut--
		}
	}
	f := &Fork{ForkSession: fork, Resume: "claude --resume " + fork}
	kept := map[string]bool{}
	for _, p := range parsed[:cut] {
		if p.UUID != "" {
			kept[p.UUID] = true
		}
	}
	var out []byte
	for i, l := range ls[:cut] {
		p := parsed[i]
		if p.Type == "last-prompt" && p.LeafUUID != "" && !kept[p.LeafUUID] {
			continue
		}
		if message(p) {
			f.KeptMessages++
		}
		out = append(append(out, replaceID(l, session, fork)...), '\n')
	}
	for _, p := range parsed[cut:] {
		if message(p) {
			f.DroppedMessages++
		}
		if p.Type == "assistant" && p.Message != nil {
			for _, b := range blocks(p.Message.Content) {
				if b.Type == "tool_use" && b.ID != "" && !slices.Contains(f.DroppedCalls, b.ID) {
					f.DroppedCalls = append(f.DroppedCalls, b.ID)
				}
			}
		}
	}
	f.data = out
	return f, nil
}

// message reports whether a line is a turn of the conversation: a prompt, a model's message,
// a tool's result.
func message(p claudeLine) bool {
	return (p.Type == "user" || p.Type == "assistant") && p.Message != nil
}

// isText reports whether a message's content is a typed prompt: a string, or blocks of text
// alone.
func isText(content json.RawMessage) bool {
	if len(content) > 0 && content[0] == '"' {
		return true
	}
	bs := blocks(content)
	return len(bs) > 0 && !slices.ContainsFunc(bs, func(b block) bool { return b.Type != "text" })
}

// blocks returns a message's content blocks; a string content (a typed prompt) has none.
func blocks(content json.RawMessage) []block {
	var bs []block
	if len(content) == 0 || content[0] != '[' || json.Unmarshal(content, &bs) != nil {
		return nil
	}
	return bs
}
