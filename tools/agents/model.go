package agents

import (
	"slices"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// Model is a scripted model serving one test, with the project's files recorded around every
// call it makes (Trees).
type Model struct {
	*mockmodel.Server
	Trees *Trees
}

// Model starts a mock model on 127.0.0.1 playing script, stopped when the test ends.
func (e *Env) Model(script mockmodel.Script) *Model {
	e.T.Helper()
	trees, s := Record(e.Project, script)
	srv, err := mockmodel.Start(s)
	if err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { srv.Close() })
	return &Model{Server: srv, Trees: trees}
}

// Answered returns the exchanges the model answered, oldest first.
func (m *Model) Answered() []mockmodel.Exchange {
	var out []mockmodel.Exchange
	for _, ex := range m.Log() {
		if ex.Err == "" {
			out = append(out, ex)
		}
	}
	return out
}

// Refused returns what the mock could not answer (a path no API is served at, a body it
// could not read), one line each: a client that calls anything else than the model.
func (m *Model) Refused() []string {
	var out []string
	for _, ex := range m.Log() {
		if ex.Err != "" {
			out = append(out, ex.Conversation.Path+": "+ex.Err)
		}
	}
	return out
}

// Calls returns the tool calls the model made whose results the client sent back, in the
// order made, from the longest history the client sent.
func (m *Model) Calls() []mockmodel.ToolCall {
	return m.Last().Calls()
}

// Last returns the answered request with the longest history (the session's last turn),
// skipping side requests that offered no tools.
func (m *Model) Last() *mockmodel.Conversation {
	var last *mockmodel.Conversation
	for _, ex := range m.Answered() {
		if len(ex.Conversation.Tools) == 0 {
			continue
		}
		if last == nil || len(ex.Conversation.Messages) >= len(last.Messages) {
			c := ex.Conversation
			last = &c
		}
	}
	if last == nil {
		return &mockmodel.Conversation{}
	}
	return last
}

// Result returns what the model read as the result of the call with that id.
func (m *Model) Result(id string) (mockmodel.ToolResult, bool) {
	for _, ex := range m.Answered() {
		if r, ok := ex.Conversation.Result(id); ok {
			return r, true
		}
	}
	return mockmodel.ToolResult{}, false
}

// CallsTo returns the calls the model made of any of the tools named, in the order made.
func (m *Model) CallsTo(names ...string) []mockmodel.ToolCall {
	var out []mockmodel.ToolCall
	for _, c := range m.Calls() {
		if slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// Systems returns every distinct system prompt the client sent (with the instructions and
// the tool lists some clients put there).
func (m *Model) Systems() []string {
	seen := map[string]bool{}
	var out []string
	for _, ex := range m.Answered() {
		if s := ex.Conversation.System; !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// ProxyEnv points every proxy variable at the mock, so that a client's request to any host but
// 127.0.0.1 reaches the mock as a CONNECT (or an absolute URL) it refuses and logs (Refused).
func (m *Model) ProxyEnv() []string {
	return []string{
		"HTTPS_PROXY=" + m.URL, "HTTP_PROXY=" + m.URL, "ALL_PROXY=" + m.URL,
		"https_proxy=" + m.URL, "http_proxy=" + m.URL, "all_proxy=" + m.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
}
