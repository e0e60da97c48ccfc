package mcpserver_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listTools lists the full tool definitions through cs.
func listTools(t testing.TB, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		tools = append(tools, tool)
	}
	return tools
}

// TestContextBudget enforces the context budget through the SDK's own client, and logs every
// profile's figure (go test -v -run ContextBudget).
func TestContextBudget(t *testing.T) {
	limits := map[mcpserver.Profile]int{mcpserver.ProfileLean: 600, mcpserver.ProfileAll: 1600}
	for _, p := range mcpserver.Profiles() {
		b, err := mcpserver.MeasureBudget(t.Context(), connect(t, fakeworkspace.New(), p))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("profile %-9s %d tools, %5d chars (instructions %d), %4d tokens (chars/4, rounded up)", p, b.Tools, b.Chars, b.Instructions, b.Tokens)
		if b.Tools != len(p.Tools()) || b.Tokens != (b.Chars+3)/4 || b.Instructions == 0 {
			t.Errorf("profile %s: inconsistent budget %+v", p, b)
		}
		if limit, ok := limits[p]; ok && b.Tokens > limit {
			t.Errorf("profile %s costs %d tokens, over its budget of %d: shorten descriptions or schemas", p, b.Tokens, limit)
		}
	}
}

// TestInstructions checks that the instructions sent on initialize teach the workflow and name
// only tools the profile exposes.
func TestInstructions(t *testing.T) {
	for _, p := range mcpserver.Profiles() {
		cs := connect(t, fakeworkspace.New(), p)
		init := cs.InitializeResult()
		if init.ServerInfo.Name != "agent-rewind" || init.ServerInfo.Version != "test" {
			t.Errorf("serverInfo = %+v", init.ServerInfo)
		}
		if init.Instructions != mcpserver.Instructions(p) {
			t.Errorf("profile %s: initialize sent other instructions than Instructions()", p)
		}
		if init.Capabilities.Tools == nil || init.Capabilities.Logging != nil || init.Capabilities.Resources != nil || init.Capabilities.Prompts != nil {
			t.Errorf("profile %s: capabilities = %+v, want tools only", p, init.Capabilities)
		}
		// Tool names that are ordinary words (list, replay) cannot be checked by search; the
		// others must appear exactly when the profile has the tool.
		for _, tool := range []string{"checkpoint", "guard_effect", "backtrack_candidates", "backtrack_commit", "savings"} {
			if named := strings.Contains(init.Instructions, tool); named != p.Has(tool) {
				t.Errorf("profile %s: instructions name %s = %v, profile has it = %v:\n%s", p, tool, named, p.Has(tool), init.Instructions)
			}
		}
	}
	lean := mcpserver.Instructions(mcpserver.ProfileLean)
	mustContain(t, "lean instructions", lean, "checkpoint", "keep the id", "rewind", "guard_effect", "stable key", "not a sandbox")
}

// TestAnnotations checks the tool annotations the issue asks for.
func TestAnnotations(t *testing.T) {
	destructive := []string{"rewind", "replay", "backtrack_commit"}
	readOnly := []string{"list", "backtrack_candidates", "savings"}
	idempotent := []string{"list", "backtrack_candidates", "savings", "rewind", "replay"}
	for _, tool := range listTools(t, connect(t, fakeworkspace.New(), mcpserver.ProfileAll)) {
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Fatalf("%s: incomplete annotations %+v", tool.Name, a)
		}
		if got, want := *a.DestructiveHint, slices.Contains(destructive, tool.Name); got != want {
			t.Errorf("%s: destructiveHint = %v, want %v", tool.Name, got, want)
		}
		if got, want := a.ReadOnlyHint, slices.Contains(readOnly, tool.Name); got != want {
			t.Errorf("%s: readOnlyHint = %v, want %v", tool.Name, got, want)
		}
		if got, want := a.IdempotentHint, slices.Contains(idempotent, tool.Name); got != want {
			t.Errorf("%s: idempotentHint = %v, want %v", tool.Name, got, want)
		}
		if *a.OpenWorldHint {
			t.Errorf("%s: openWorldHint = true", tool.Name)
		}
		if tool.Description == "" || len(tool.Description) > 140 {
			t.Errorf("%s: description of %d bytes; keep it present and short", tool.Name, len(tool.Description))
		}
	}
}

// lintSchema reports what would make a schema unportable across MCP clients, in the spirit of
// the MCP Inspector's schema lint (mcp-inspector --cli --strict): a bare boolean schema where a
// property, items or the root is expected (Claude Code rejects it), a "type" that is an array
// (clients that read one string drop or reject the tool), a node without "type", $ref/$defs and
// combinators (Gemini's function-declaration dialect lacks them). It is stricter than the
// Inspector, which only warns on some of these.
func lintSchema(at string, v any, problems *[]string) {
	m, ok := v.(map[string]any)
	if !ok {
		*problems = append(*problems, fmt.Sprintf("%s: schema is %v, not an object", at, v))
		return
	}
	switch ty := m["type"].(type) {
	case string:
		if !slices.Contains([]string{"object", "array", "string", "integer", "number", "boolean"}, ty) {
			*problems = append(*problems, fmt.Sprintf("%s: type %q", at, ty))
		}
	case nil:
		*problems = append(*problems, at+": no type")
	default:
		*problems = append(*problems, fmt.Sprintf("%s: type %v is not a single string", at, ty))
	}
	for _, k := range []string{"$ref", "$defs", "definitions", "anyOf", "oneOf", "allOf", "not", "nullable", "format"} {
		if _, ok := m[k]; ok {
			*problems = append(*problems, fmt.Sprintf("%s: uses %s", at, k))
		}
	}
	if props, ok := m["properties"]; ok {
		pm, ok := props.(map[string]any)
		if !ok {
			*problems = append(*problems, at+": properties is not an object")
		}
		for name, p := range pm {
			lintSchema(at+"/properties/"+name, p, problems)
		}
	}
	if items, ok := m["items"]; ok {
		lintSchema(at+"/items", items, problems)
	}
	if ap, ok := m["additionalProperties"]; ok && ap != false {
		if _, isObj := ap.(map[string]any); !isObj {
			*problems = append(*problems, fmt.Sprintf("%s: additionalProperties is %v", at, ap))
		} else {
			lintSchema(at+"/additionalProperties", ap, problems)
		}
	}
	if req, ok := m["required"].([]any); ok {
		props, _ := m["properties"].(map[string]any)
		for _, r := range req {
			if _, ok := props[r.(string)]; !ok {
				*problems = append(*problems, fmt.Sprintf("%s: required %v is not a property", at, r))
			}
		}
	}
}

// TestSchemasPortable lints every tool's input and output schema as a client receives them.
func TestSchemasPortable(t *testing.T) {
	for _, tool := range listTools(t, connect(t, fakeworkspace.New(), mcpserver.ProfileAll)) {
		var problems []string
		lintSchema(tool.Name+" inputSchema", tool.InputSchema, &problems)
		lintSchema(tool.Name+" outputSchema", tool.OutputSchema, &problems)
		if in := tool.InputSchema.(map[string]any); in["type"] != "object" || in["additionalProperties"] != false {
			problems = append(problems, tool.Name+": input schema is not a closed object")
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
	// The lint itself catches what it claims to.
	var problems []string
	lintSchema("bad", map[string]any{"type": "object", "properties": map[string]any{
		"a": true, "b": map[string]any{"type": []any{"null", "array"}}, "c": map[string]any{}, "d": map[string]any{"$ref": "#/x", "type": "string"},
	}}, &problems)
	if len(problems) != 4 {
		t.Errorf("lintSchema on a bad schema found %d problems, want 4: %q", len(problems), problems)
	}
}

// TestOutputsComplete checks the wire rule the output schemas leave out: every property of every
// output (nested too) is present and never null.
func TestOutputsComplete(t *testing.T) {
	ws := fakeworkspace.New()
	cs := connect(t, ws, mcpserver.ProfileAll)
	schemas := map[string]any{}
	for _, tool := range listTools(t, cs) {
		schemas[tool.Name] = tool.OutputSchema
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"checkpoint", nil},
		{"checkpoint", map[string]any{"label": "second"}},
		{"backtrack_commit", map[string]any{"id": "cp0001", "what_failed": "x"}},
		{"list", nil},
		{"rewind", map[string]any{"id": "cp0002"}},
		{"replay", map[string]any{"id": "cp0003"}},
		{"guard_effect", map[string]any{"key": "k"}},
		{"guard_effect", map[string]any{"key": "k"}},
		{"savings", nil},
		{"backtrack_candidates", nil},
	}
	seen := map[string]bool{}
	for _, c := range calls {
		res := call(t, cs, c.tool, c.args)
		if res.IsError {
			t.Fatalf("%s: %s", c.tool, resultText(t, res))
		}
		var problems []string
		complete(c.tool, schemas[c.tool], res.StructuredContent, &problems)
		for _, p := range problems {
			t.Error(p)
		}
		seen[c.tool] = true
	}
	if len(seen) != 8 {
		t.Errorf("covered %d tools, want all 8", len(seen))
	}
}

// complete reports properties of schema missing or null in v.
func complete(at string, schema, v any, problems *[]string) {
	s, _ := schema.(map[string]any)
	switch s["type"] {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			*problems = append(*problems, fmt.Sprintf("%s: %v is not an object", at, v))
			return
		}
		props, _ := s["properties"].(map[string]any)
		for name, ps := range props {
			pv, ok := m[name]
			if !ok || pv == nil {
				*problems = append(*problems, fmt.Sprintf("%s.%s is missing or null", at, name))
				continue
			}
			complete(at+"."+name, ps, pv, problems)
		}
		for name := range m {
			if _, ok := props[name]; !ok {
				*problems = append(*problems, fmt.Sprintf("%s.%s is not in the output schema", at, name))
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			*problems = append(*problems, fmt.Sprintf("%s: %v is not an array", at, v))
			return
		}
		for i, e := range a {
			complete(fmt.Sprintf("%s[%d]", at, i), s["items"], e, problems)
		}
	}
}
