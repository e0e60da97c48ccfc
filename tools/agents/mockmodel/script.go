package mockmodel

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
)

// Step is one move of a Sequence: a function that makes the next tool call from the request
// (so it can choose the client's own tool name and read earlier results), or returns ok false
// when the client did not offer what the step needs (the sequence then ends with a text that
// says so, which the test reads from the log).
type Step func(c *Conversation) (call ToolCall, ok bool)

// Sequence is the Script that makes one tool call per request in the order of steps, then
// answers done. Its position is the number of this sequence's calls whose results the client
// has already sent, so a retried or repeated request gets the same answer. Requests that offer
// no tools (titles, summaries, quota checks some clients send) get a short text and do not
// move it.
func Sequence(done string, steps ...Step) Script {
	var n atomic.Int64 // distinct call ids, unique across the sequence's sessions
	return func(c *Conversation) Turn {
		if len(c.Tools) == 0 {
			return Turn{Text: "ok"}
		}
		pos := 0
		for _, call := range c.Calls() {
			if strings.HasPrefix(call.ID, callPrefix) {
				if _, answered := c.Result(call.ID); answered {
					pos++
				}
			}
		}
		if pos >= len(steps) {
			return Turn{Text: done}
		}
		call, ok := steps[pos](c)
		if !ok {
			return Turn{Text: fmt.Sprintf("mockmodel: step %d cannot be played: the client did not offer the tool it needs (offered: %s)", pos+1, strings.Join(c.Tools, ", "))}
		}
		if call.ID == "" {
			call.ID = fmt.Sprintf("%s%02d_%d", callPrefix, pos+1, n.Add(1))
		}
		if len(call.Args) == 0 {
			call.Args = json.RawMessage("{}")
		}
		return Turn{ToolCalls: []ToolCall{call}}
	}
}

// callPrefix starts the ids of the calls a Sequence makes, so it can count its own calls
// among whatever else is in the history. Clients that assign their own call ids (Gemini CLI)
// report results by name and order instead: their adapters map them back.
const callPrefix = "call_mock_"

// Call returns a Step that calls the first of names the client offers with args (marshalled
// to JSON).
func Call(args any, names ...string) Step {
	return func(c *Conversation) (ToolCall, bool) {
		name := c.FirstTool(names...)
		if name == "" {
			return ToolCall{}, false
		}
		b, err := json.Marshal(args)
		if err != nil {
			panic(fmt.Sprintf("mockmodel.Call: arguments do not marshal: %v", err)) // a bug in the test, not input
		}
		return ToolCall{Name: name, Args: b}, true
	}
}
