package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor derives the JSON Schema of T from its Go type, as the SDK would, and then makes it
// portable across MCP clients:
//
//   - every schema node has exactly one "type", a string. jsonschema-go writes Go slices as
//     "type": ["null","array"]; several clients read "type" as a single string and reject or
//     mangle the array form (the MCP Inspector's schema lint warns on it). The handlers never
//     return a nil slice, so "array" alone is accurate.
//   - no bare boolean or empty schemas (Claude Code rejects a bare true), no $ref or $defs.
//
// json.RawMessage, used for the guard payload, is given as a JSON object.
func schemaFor[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Type: "object"},
	}})
	if err != nil {
		return nil, err
	}
	if err := makePortable(s, "#"); err != nil {
		return nil, fmt.Errorf("schema of %v: %w", reflect.TypeFor[T](), err)
	}
	return s, nil
}

// makePortable rewrites s in place as schemaFor describes, or reports the first node it cannot
// make portable, by JSON pointer.
func makePortable(s *jsonschema.Schema, at string) error {
	if len(s.Types) > 0 {
		types := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		if len(types) != 1 {
			return fmt.Errorf("%s: type %v is a union", at, s.Types)
		}
		s.Type, s.Types = types[0], nil
	}
	if s.Type == "" {
		return fmt.Errorf("%s: no type", at)
	}
	if s.Ref != "" || len(s.Defs) > 0 || len(s.Definitions) > 0 || s.AnyOf != nil || s.OneOf != nil || s.AllOf != nil {
		return fmt.Errorf("%s: uses $ref, $defs or a combinator", at)
	}
	for name, p := range s.Properties {
		if err := makePortable(p, at+"/properties/"+name); err != nil {
			return err
		}
	}
	if s.Items != nil {
		if err := makePortable(s.Items, at+"/items"); err != nil {
			return err
		}
	}
	if a := s.AdditionalProperties; a != nil && !isFalseSchema(a) {
		if err := makePortable(a, at+"/additionalProperties"); err != nil {
			return err
		}
	}
	return nil
}

// isFalseSchema reports whether s is the schema that matches nothing, which marshals as false
// (jsonschema-go's "additionalProperties": false on structs).
func isFalseSchema(s *jsonschema.Schema) bool {
	rest := *s
	rest.Not = nil
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero() && reflect.ValueOf(rest).IsZero()
}

// trimOutput drops "additionalProperties": false from an output schema: it constrains inputs
// usefully (a misspelt argument is rejected, not ignored) but would make a client reject the
// result of a newer server that adds a field, and it costs context on every turn. "required"
// stays: every output property is always present and never null (tested), and saying so lets a
// client's validation catch a result that lacks one.
func trimOutput(s *jsonschema.Schema) {
	if s.AdditionalProperties != nil && isFalseSchema(s.AdditionalProperties) {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		trimOutput(p)
	}
	if s.Items != nil {
		trimOutput(s.Items)
	}
}
