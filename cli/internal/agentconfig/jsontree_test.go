package agentconfig

import (
	"strings"
	"testing"
)

// A file setup rewrites keeps every member, in its order, with the same values.
func TestJSONKeepsOrderAndValues(t *testing.T) {
	src := `{"z": 1, "a": {"y": [1.50, "x & y > z", null, true], "b": {}}, "m": "\u00e9"}`
	n, err := parseJSON([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := string(n.encode())
	if !strings.Contains(out, "1.50") || !strings.Contains(out, "x & y > z") || strings.Index(out, `"z"`) > strings.Index(out, `"a"`) {
		t.Errorf("re-encoded:\n%s", out)
	}
	back, err := parseJSON([]byte(out))
	if err != nil || !equal(n, back) {
		t.Errorf("not the same value once re-read (%v):\n%s", err, out)
	}
	if n, err := parseJSON([]byte(" \n")); err != nil || n.kind != jObject || !n.empty() {
		t.Errorf("an empty file: %v %v", n, err)
	}
}

func TestJSONRefuses(t *testing.T) {
	for src, want := range map[string]string{
		`{"a": 1, // note` + "\n}": "comment",
		`{"a": 1,}`:                "line 1",
		`{"a": 1, "a": 2}`:         "appears twice",
		"\xef\xbb\xbf{}":           "byte-order mark",
		`{"a": 1} {"b": 2}`:        "more follows",
		`{"a": [1, 2}`:             "line 1",
		"{\n\"a\": 1\n\n":          "line",
		strings.Repeat("[", 300):   "nested",
	} {
		if _, err := parseJSON([]byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want an error naming %q", src, err, want)
		}
	}
}

// FuzzParseJSON: any input is read or refused, never a panic; what is read encodes to the same
// value.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "x"}]}]}}`, `[1, "a", null]`, `{"a": 1e400}`, `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		n, err := parseJSON([]byte(src))
		if err != nil {
			return
		}
		back, err := parseJSON(n.encode())
		if err != nil || !equal(n, back) {
			t.Fatalf("%q encodes to %q, which reads back as another value (%v)", src, n.encode(), err)
		}
	})
}
