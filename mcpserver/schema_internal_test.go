package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSchemaForRefusesUnportable checks that schemaFor fails loudly, at New, on a Go type whose
// schema cannot be made portable, rather than sending it to clients.
func TestSchemaForRefusesUnportable(t *testing.T) {
	if _, err := schemaFor[struct {
		Data any `json:"data"`
	}](); err == nil || !strings.Contains(err.Error(), "#/properties/data: no type") {
		t.Errorf("a field of type any: err = %v", err)
	}
	if _, err := schemaFor[struct {
		M map[string]any `json:"m"`
	}](); err == nil || !strings.Contains(err.Error(), "#/properties/m/additionalProperties: no type") {
		t.Errorf("a map of any: err = %v", err)
	}
	s, err := schemaFor[struct {
		P    *int            `json:"p"`
		L    []string        `json:"l"`
		Blob json.RawMessage `json:"blob"`
	}]()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"p": "integer", "l": "array", "blob": "object"} {
		if got := s.Properties[name]; got.Type != want || got.Types != nil {
			t.Errorf("property %s: type %q types %v, want %q alone", name, got.Type, got.Types, want)
		}
	}
}
