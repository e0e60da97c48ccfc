package mockmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responses is OpenAI's Responses API (POST /v1/responses), which Codex CLI speaks: the history
// is a list of typed input items (messages, function calls and their outputs), the tools a list
// that may nest namespaces, and the answer is a response object, or with "stream": true, its
// events as server-sent events.
//
// Codex (0.169.0) also sends tools in an "additional_tools" input item, defers MCP tools behind
// its client-side tool_search tool (the model calls tool_search; the tools it returns arrive in
// a "tool_search_output" item, in a namespace such as "mcp__agent_rewind"), and offers
// apply_patch as a custom (freeform) tool. A namespaced tool is named namespace + "__" + name in
// the Conversation (mcp__agent_rewind__checkpoint: the name Codex gives its hooks), and a call
// of it is written back as a function_call with that namespace.
type responses struct{}

func init() { routes["POST /v1/responses"] = responses{} }

type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"` // a string, or a list of items
	Tools        []responsesTool `json:"tools"`
}

type responsesTool struct {
	Type  string          `json:"type"` // function, custom, namespace, tool_search, web_search, ...
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"` // a namespace's tools
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a string, or a list of parts
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments json.RawMessage `json:"arguments"` // a JSON text in a string (function_call), an object (tool_search_call)
	Input     *string         `json:"input"`     // custom_tool_call
	Action    json.RawMessage `json:"action"`    // local_shell_call
	Output    json.RawMessage `json:"output"`    // a string, or a list of parts
	Tools     []responsesTool `json:"tools"`     // additional_tools, tool_search_output

	rawTools json.RawMessage // the tools as sent, which is what the model reads of a search
}

// responsesIgnored are the input item types that carry nothing a script reads: the model's own
// reasoning and hosted tool calls, and the client's context bookkeeping.
var responsesIgnored = map[string]bool{
	"reasoning": true, "web_search_call": true, "image_generation_call": true, "file_search_call": true,
	"compaction": true, "compaction_trigger": true, "context_compaction": true, "configuration_update": true,
	"item_reference": true, "ghost_snapshot": true,
}

// responsesDefaultNamespace is the namespace whose tools go by their bare names (OpenAI's own
// name for the namespace of ordinary function tools).
const responsesDefaultNamespace = "functions"

// responsesToolRef says how to write a call of one offered tool back: its kind and, for a
// namespaced tool, the namespace and the name inside it.
type responsesToolRef struct {
	kind      string // "function", "custom" or "tool_search"
	namespace string
	name      string
}

func (responses) parse(r *http.Request, body []byte) (Conversation, error) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return Conversation{}, fmt.Errorf("openai-responses: the request body is not a Responses API request (%v); send a JSON object with model and input", err)
	}
	items, err := responsesItems(req.Input)
	if err != nil {
		return Conversation{}, err
	}
	c := Conversation{API: "openai-responses", Model: req.Model, Stream: req.Stream}
	var system []string
	if strings.TrimSpace(req.Instructions) != "" {
		system = append(system, req.Instructions)
	}
	names, _ := responsesTools(req.Tools, items)
	c.Tools = names
	for i, it := range items {
		switch it.Type {
		case "message", "":
			text, err := responsesText(it.Content)
			if err != nil {
				return Conversation{}, fmt.Errorf("openai-responses: input item %d (a %s message): %w", i, it.Role, err)
			}
			switch it.Role {
			case "system", "developer":
				system = append(system, text)
			case "user", "assistant":
				c.Messages = append(c.Messages, Message{Role: it.Role, Text: text})
			default:
				return Conversation{}, fmt.Errorf("openai-responses: input item %d is a message with role %q; the roles are user, assistant, system and developer", i, it.Role)
			}
		case "function_call", "custom_tool_call", "tool_search_call", "local_shell_call":
			call, err := responsesCall(it)
			if err != nil {
				return Conversation{}, fmt.Errorf("openai-responses: input item %d (%s): %w", i, it.Type, err)
			}
			c.Messages = appendCall(c.Messages, call)
		case "function_call_output", "custom_tool_call_output", "tool_search_output", "local_shell_call_output":
			res, err := responsesResult(it)
			if err != nil {
				return Conversation{}, fmt.Errorf("openai-responses: input item %d (%s): %w", i, it.Type, err)
			}
			c.Messages = appendResult(c.Messages, res)
		case "additional_tools":
			// its tools were read above
		default:
			if !responsesIgnored[it.Type] {
				return Conversation{}, fmt.Errorf("openai-responses: input item %d has type %q, which this mock does not read; teach responses.go that type", i, it.Type)
			}
		}
	}
	c.System = strings.Join(system, "\n")
	return c, nil
}

// responsesItems reads the input: a bare string is one user message.
func responsesItems(input json.RawMessage) ([]responsesItem, error) {
	if len(input) == 0 || string(input) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(input, &s) == nil {
		content, _ := json.Marshal(s)
		return []responsesItem{{Type: "message", Role: "user", Content: content}}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(input, &raws); err != nil {
		return nil, fmt.Errorf("openai-responses: input is neither a string nor a list of items (%v)", err)
	}
	items := make([]responsesItem, len(raws))
	for i, raw := range raws {
		var tools struct {
			Tools json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &items[i]); err != nil {
			return nil, fmt.Errorf("openai-responses: input item %d is not an item (%v): %s", i, err, clipped(raw))
		}
		_ = json.Unmarshal(raw, &tools) // it just did as a whole
		items[i].rawTools = tools.Tools
	}
	return items, nil
}

// responsesTools lists the tools offered, in order and once each: the request's tools, then
// those of additional_tools items and those tool_search loaded, with how to call each.
func responsesTools(tools []responsesTool, items []responsesItem) ([]string, map[string]responsesToolRef) {
	var names []string
	refs := map[string]responsesToolRef{}
	var add func(ts []responsesTool, namespace string)
	add = func(ts []responsesTool, namespace string) {
		for _, t := range ts {
			if t.Type == "namespace" {
				add(t.Tools, t.Name)
				continue
			}
			name, kind := t.Name, t.Type
			if name == "" {
				name = t.Type // hosted tools (web_search, tool_search) are named by their type
			}
			if kind != "custom" && kind != "tool_search" {
				kind = "function"
			}
			ref := responsesToolRef{kind: kind, name: name}
			if namespace != "" && namespace != responsesDefaultNamespace {
				ref.namespace = namespace
				name = namespace + "__" + name
			}
			if _, seen := refs[name]; !seen {
				names = append(names, name)
				refs[name] = ref
			}
		}
	}
	add(tools, "")
	for _, it := range items {
		if it.Type == "additional_tools" || it.Type == "tool_search_output" {
			add(it.Tools, "")
		}
	}
	return names, refs
}

// responsesText joins the text parts of a message's content (a string, or parts of type
// input_text, output_text or text; images and files are left out).
func responsesText(content json.RawMessage) (string, error) {
	if len(content) == 0 || string(content) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor a list of parts (%v)", err)
	}
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text", "refusal", "summary_text", "reasoning_text":
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

func responsesCall(it responsesItem) (ToolCall, error) {
	if it.CallID == "" {
		return ToolCall{}, fmt.Errorf("no call_id: every tool call must carry the id its result is reported under")
	}
	call := ToolCall{ID: it.CallID, Name: it.Name}
	if it.Namespace != "" && it.Namespace != responsesDefaultNamespace {
		call.Name = it.Namespace + "__" + it.Name
	}
	switch it.Type {
	case "function_call":
		var text string
		if err := json.Unmarshal(it.Arguments, &text); err != nil {
			return ToolCall{}, fmt.Errorf("arguments %s are not a string holding JSON", clipped(it.Arguments))
		}
		call.Args = json.RawMessage(text)
	case "custom_tool_call":
		if it.Input == nil {
			return ToolCall{}, fmt.Errorf("no input: a custom tool call carries its input as a string")
		}
		call.Args, _ = json.Marshal(map[string]string{"input": *it.Input})
	case "tool_search_call":
		call.Name, call.Args = "tool_search", it.Arguments
	case "local_shell_call":
		call.Name, call.Args = "local_shell", it.Action
	}
	if len(call.Args) == 0 {
		call.Args = json.RawMessage("{}")
	}
	if !json.Valid(call.Args) {
		return ToolCall{}, fmt.Errorf("call %s: its arguments %s are not JSON", it.CallID, clipped(call.Args))
	}
	return call, nil
}

func responsesResult(it responsesItem) (ToolResult, error) {
	if it.CallID == "" {
		return ToolResult{}, fmt.Errorf("no call_id: a tool result must name the call it answers")
	}
	res := ToolResult{CallID: it.CallID}
	if it.Type == "tool_search_output" {
		// what the model reads of a search is the tools it loaded, their descriptions and the
		// namespaces' (which carry an MCP server's instructions)
		res.Text = string(it.rawTools)
		return res, nil
	}
	text, err := responsesText(it.Output)
	if err != nil {
		return ToolResult{}, fmt.Errorf("output: %w", err)
	}
	res.Text = text
	return res, nil
}

// appendCall adds a call to the newest assistant turn, or starts one.
func appendCall(ms []Message, call ToolCall) []Message {
	if n := len(ms); n > 0 && ms[n-1].Role == "assistant" && len(ms[n-1].ToolResults) == 0 {
		ms[n-1].ToolCalls = append(ms[n-1].ToolCalls, call)
		return ms
	}
	return append(ms, Message{Role: "assistant", ToolCalls: []ToolCall{call}})
}

// appendResult adds a result to the newest turn of results, or starts one (a user turn, as
// Anthropic's API has them: the neutral shape has no tool role).
func appendResult(ms []Message, res ToolResult) []Message {
	if n := len(ms); n > 0 && ms[n-1].Role == "user" && ms[n-1].Text == "" && len(ms[n-1].ToolResults) > 0 {
		ms[n-1].ToolResults = append(ms[n-1].ToolResults, res)
		return ms
	}
	return append(ms, Message{Role: "user", ToolResults: []ToolResult{res}})
}

// clipped shortens what goes into an error message.
func clipped(b []byte) string {
	const max = 120
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

func (responses) write(w http.ResponseWriter, c *Conversation, t Turn) error {
	var req responsesRequest
	_ = json.Unmarshal(c.Raw, &req) // parse read it already
	items, _ := responsesItems(req.Input)
	_, refs := responsesTools(req.Tools, items)
	id := nextID("resp_")
	var output []map[string]any
	if t.Text != "" || len(t.ToolCalls) == 0 {
		output = append(output, map[string]any{
			"type": "message", "id": nextID("msg_"), "status": "completed", "role": "assistant",
			"content": []map[string]any{{"type": "output_text", "text": t.Text, "annotations": []any{}}},
		})
	}
	for _, call := range t.ToolCalls {
		output = append(output, responsesCallItem(call, refs))
	}
	usage := map[string]any{
		"input_tokens": tokens(len(c.Raw)), "input_tokens_details": map[string]int{"cached_tokens": 0},
		"output_tokens": tokens(turnSize(t)), "output_tokens_details": map[string]int{"reasoning_tokens": 0},
		"total_tokens": tokens(len(c.Raw)) + tokens(turnSize(t)),
	}
	resp := map[string]any{
		"id": id, "object": "response", "created_at": unixNow(), "status": "completed", "model": c.Model,
		"output": output, "usage": usage, "parallel_tool_calls": true, "tool_choice": "auto",
	}
	if !c.Stream {
		return writeJSON(w, resp)
	}
	ev := newSSE(w)
	seq := 0
	send := func(typ string, data map[string]any) { // each event names its type and its place
		data["type"], data["sequence_number"] = typ, seq
		seq++
		ev.send(typ, data)
	}
	started := map[string]any{"id": id, "object": "response", "created_at": resp["created_at"], "status": "in_progress", "model": c.Model, "output": []any{}}
	send("response.created", map[string]any{"response": started})
	send("response.in_progress", map[string]any{"response": started})
	for i, item := range output {
		responsesStreamItem(send, i, item)
	}
	send("response.completed", map[string]any{"response": resp})
	return ev.err
}

// responsesCallItem is one call in the output, in the form its tool takes.
func responsesCallItem(call ToolCall, refs map[string]responsesToolRef) map[string]any {
	ref, ok := refs[call.Name]
	if !ok {
		ref = responsesToolRef{kind: "function", name: call.Name} // not offered: the client says so
	}
	switch ref.kind {
	case "custom":
		var in struct {
			Input string `json:"input"`
		}
		_ = json.Unmarshal(call.Args, &in)
		return map[string]any{"type": "custom_tool_call", "id": "ctc_" + call.ID, "call_id": call.ID, "name": ref.name, "input": in.Input, "status": "completed"}
	case "tool_search":
		return map[string]any{"type": "tool_search_call", "id": "tsc_" + call.ID, "call_id": call.ID, "execution": "client", "arguments": call.Args, "status": "completed"}
	}
	item := map[string]any{"type": "function_call", "id": "fc_" + call.ID, "call_id": call.ID, "name": ref.name, "arguments": string(call.Args), "status": "completed"}
	if ref.namespace != "" {
		item["namespace"] = ref.namespace
	}
	return item
}

// responsesStreamItem sends one output item as the API streams it: added, its deltas, done.
func responsesStreamItem(send func(string, map[string]any), i int, item map[string]any) {
	id := item["id"]
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	switch item["type"] {
	case "message":
		added["content"] = []any{}
	case "function_call":
		added["arguments"] = ""
	case "custom_tool_call":
		added["input"] = ""
	}
	send("response.output_item.added", map[string]any{"output_index": i, "item": added})
	switch item["type"] {
	case "message":
		text := item["content"].([]map[string]any)[0]["text"]
		empty := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
		send("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": empty})
		send("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": text})
		send("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": text})
		send("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": item["content"].([]map[string]any)[0]})
	case "function_call":
		send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": item["arguments"]})
		send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": item["arguments"]})
	case "custom_tool_call":
		send("response.custom_tool_call_input.delta", map[string]any{"item_id": id, "output_index": i, "call_id": item["call_id"], "delta": item["input"]})
		send("response.custom_tool_call_input.done", map[string]any{"item_id": id, "output_index": i, "call_id": item["call_id"], "input": item["input"]})
	}
	send("response.output_item.done", map[string]any{"output_index": i, "item": item})
}
