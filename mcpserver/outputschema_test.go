package mcpserver_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
	"github.com/google/jsonschema-go/jsonschema"
)

// outputTypes is each tool's result type, whose every field is always present.
var outputTypes = map[string]reflect.Type{
	"checkpoint":           reflect.TypeFor[mcpserver.CheckpointResult](),
	"list":                 reflect.TypeFor[mcpserver.ListResult](),
	"rewind":               reflect.TypeFor[mcpserver.RestoreResult](),
	"replay":               reflect.TypeFor[mcpserver.RestoreResult](),
	"guard_effect":         reflect.TypeFor[mcpserver.GuardResult](),
	"savings":              reflect.TypeFor[mcpserver.SavingsResult](),
	"backtrack_candidates": reflect.TypeFor[mcpserver.CandidatesResult](),
	"backtrack_commit":     reflect.TypeFor[mcpserver.BacktrackResult](),
}

// jsonNames are the JSON names of t's fields.
func jsonNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue // not in the structured result
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// requireAll reports every object node of an output schema whose "required" is not exactly its
// properties.
func requireAll(at string, v any, problems *[]string) {
	m, _ := v.(map[string]any)
	if props, ok := m["properties"].(map[string]any); ok {
		var names, req []string
		for name, p := range props {
			names = append(names, name)
			requireAll(at+"/properties/"+name, p, problems)
		}
		r, _ := m["required"].([]any)
		for _, x := range r {
			req = append(req, x.(string))
		}
		slices.Sort(names)
		slices.Sort(req)
		if !slices.Equal(names, req) {
			*problems = append(*problems, at+": required "+strings.Join(req, ",")+", want every property: "+strings.Join(names, ","))
		}
	}
	if items, ok := m["items"]; ok {
		requireAll(at+"/items", items, problems)
	}
	if _, ok := m["description"]; ok {
		*problems = append(*problems, at+": a description, which costs context on every turn and which no model needs to read a result")
	}
}

// TestOutputSchemasRequired: every output schema marks every property required, at every level
// (each is always present), so that a client's validation catches a result that lacks one, and
// carries no descriptions; real
// results validate against them, and the same results with a field taken out do not.
func TestOutputSchemasRequired(t *testing.T) {
	cs := connect(t, fakeworkspace.New(), mcpserver.ProfileAll)
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range listTools(t, cs) {
		var problems []string
		requireAll(tool.Name, tool.OutputSchema, &problems)
		for _, p := range problems {
			t.Error(p)
		}
		top, _ := tool.OutputSchema.(map[string]any)["required"].([]any)
		var got []string
		for _, x := range top {
			got = append(got, x.(string))
		}
		slices.Sort(got)
		if want := jsonNames(outputTypes[tool.Name]); !slices.Equal(got, want) {
			t.Errorf("%s: required %v, want the result's fields %v", tool.Name, got, want)
		}
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		if schemas[tool.Name], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s: resolve the output schema: %v", tool.Name, err)
		}
	}
	if len(schemas) != len(outputTypes) {
		t.Fatalf("%d tools listed, want %d", len(schemas), len(outputTypes))
	}

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"checkpoint", map[string]any{"label": "first"}},
		{"checkpoint", map[string]any{}},
		{"rewind", map[string]any{"id": "cp0001"}},
		{"replay", map[string]any{"id": "cp0003"}},
		{"list", nil},
		{"guard_effect", map[string]any{"key": "deploy:prod:1", "payload": map[string]any{"v": 1}}},
		{"guard_effect", map[string]any{"key": "deploy:prod:1", "payload": map[string]any{"v": 1}}},
		{"savings", nil},
		{"backtrack_commit", map[string]any{"id": "cp0001", "what_failed": "the parser broke", "lesson": "use the AST"}},
		{"backtrack_candidates", nil},
	}
	for _, c := range calls {
		res := call(t, cs, c.tool, c.args)
		if res.IsError {
			t.Fatalf("%s: tool error: %s", c.tool, resultText(t, res))
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var result map[string]any
		if err := json.Unmarshal(b, &result); err != nil {
			t.Fatalf("%s: structured content %s: %v", c.tool, b, err)
		}
		if err := schemas[c.tool].Validate(result); err != nil {
			t.Errorf("%s: the real result does not validate against its output schema: %v\n%s", c.tool, err, b)
		}
		for name := range result {
			lacking := make(map[string]any, len(result))
			for k, v := range result {
				if k != name {
					lacking[k] = v
				}
			}
			if schemas[c.tool].Validate(lacking) == nil {
				t.Errorf("%s: a result without %q validates", c.tool, name)
			}
		}
	}
}
