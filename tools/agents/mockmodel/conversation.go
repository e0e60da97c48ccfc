package mockmodel

import (
	"encoding/json"
	"slices"
	"strings"
)

// Conversation is one request a client sent to the model, read into the same shape whatever
// API carried it, so that one script can play every client.
type Conversation struct {
	API    string   // "anthropic", "openai-responses", "openai-chat" or "gemini"
	Path   string   // the request's path, e.g. "/v1/messages"
	Model  string   // the model the client asked for
	Stream bool     // the client asked for server-sent events
	System string   // the system prompt and instructions, joined (with any system turns among the messages)
	Tools  []string // the names of the tools the client offered, in its order
	// Messages is the history the client sent, oldest first: user and assistant turns (a
	// system turn among them, as Claude Code sends, is joined into System instead).
	Messages []Message
	Raw      []byte // the request body exactly as sent
}

// Message is one turn of the history.
type Message struct {
	Role        string       // "user" or "assistant"
	Text        string       // the turn's text parts, joined with newlines
	ToolCalls   []ToolCall   // calls the model made in this (assistant) turn
	ToolResults []ToolResult // results the client reported in this (user/tool) turn
}

// ToolCall is a call of one tool by the model.
type ToolCall struct {
	ID   string          // the call id the client will report the result under
	Name string          // the tool's name as the client offered it
	Args json.RawMessage // the arguments, a JSON object
}

// ToolResult is what the client sent back to the model for one call: what the model reads.
type ToolResult struct {
	CallID  string
	Text    string // every part of the result as the client put it in the request, joined
	IsError bool
}

// Turn is the model's answer to one request: tool calls, or when there are none, a final text.
type Turn struct {
	Text      string
	ToolCalls []ToolCall
}

// Script plays the model for one session: given the request, the next turn. It is called
// concurrently when a client sends requests in parallel, and must decide from the request
// alone (clients retry and send side requests, so a count of calls is not a position).
type Script func(c *Conversation) Turn

// HasTool reports whether the client offered a tool of that name.
func (c *Conversation) HasTool(name string) bool { return slices.Contains(c.Tools, name) }

// FirstTool returns the first of names the client offered, "" when it offered none of them:
// clients name the same tool differently (Bash, shell, exec_command, run_shell_command).
func (c *Conversation) FirstTool(names ...string) string {
	for _, n := range names {
		if c.HasTool(n) {
			return n
		}
	}
	return ""
}

// Results returns every tool result in the history, oldest first.
func (c *Conversation) Results() []ToolResult {
	var rs []ToolResult
	for _, m := range c.Messages {
		rs = append(rs, m.ToolResults...)
	}
	return rs
}

// Calls returns every tool call the model made in the history, oldest first.
func (c *Conversation) Calls() []ToolCall {
	var cs []ToolCall
	for _, m := range c.Messages {
		cs = append(cs, m.ToolCalls...)
	}
	return cs
}

// Result returns the result reported for the call with that id.
func (c *Conversation) Result(callID string) (ToolResult, bool) {
	for _, r := range c.Results() {
		if r.CallID == callID {
			return r, true
		}
	}
	return ToolResult{}, false
}

// LastUserText returns the text of the newest user turn ("" when none has text).
func (c *Conversation) LastUserText() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if m := c.Messages[i]; m.Role == "user" && strings.TrimSpace(m.Text) != "" {
			return m.Text
		}
	}
	return ""
}
