package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var validityCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `true`, `false`, `null`,
	` {"a" : [1, 2, {"b": null}], "c": "x\"y\\z\u00e9\ud83d\ude00"} `,
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{1:2}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`,
	`"\x"`, "\"a\tb\"", `"\u12"`, `tru`, `nul`, `[1 2]`, `{"a":1 "b":2}`, `"abc`, ``, ` `,
	`{"a":1}x`, `[` + strings.Repeat(`"0123456789abcdef"`, 3) + `]`, "\"\xff\xfe\"",
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.40q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

func TestStringFastPathFindsEverySpecialByte(t *testing.T) {
	// Put a quote, a backslash or a control byte at every position of a long string: the
	// 8-byte fast path must stop at each.
	for pos := 0; pos < 40; pos++ {
		for _, sp := range []byte{'"', '\\', 0x00, 0x1f, '\n'} {
			s := bytes.Repeat([]byte{'a'}, 40)
			s[pos] = sp
			doc := append(append([]byte{'"'}, s...), '"')
			if got, want := Valid(doc), json.Valid(doc); got != want {
				t.Fatalf("special %#x at %d: Valid = %v, encoding/json %v", sp, pos, got, want)
			}
		}
	}
}

func TestObjectWalk(t *testing.T) {
	data := []byte(` {"a": [1,2], "m\u0065ssages": {"x": 1}, "z": "q"} `)
	o, err := OpenObject(data, SkipSpace(data, 0), 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for o.Next() {
		keys = append(keys, string(o.Key()))
		if o.KeyIs("messages") {
			end, err := SkipValue(data, o.Value(), o.Depth())
			if err != nil {
				t.Fatal(err)
			}
			o.Consumed(end)
		}
	}
	if o.Err() != nil {
		t.Fatal(o.Err())
	}
	if got := strings.Join(keys, " "); got != `"a" "m\u0065ssages" "z"` {
		t.Fatalf("keys %s", got)
	}
	if o.End() != len(data)-1 {
		t.Fatalf("end %d, want %d", o.End(), len(data)-1)
	}
}

func TestArrayWalkErrors(t *testing.T) {
	for _, doc := range []string{`[1,`, `[1 2]`, `[,]`} {
		a, err := OpenArray([]byte(doc), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for a.Next() {
		}
		if a.Err() == nil {
			t.Errorf("%q: no error", doc)
		}
	}
}

func TestErrorNeverQuotesInput(t *testing.T) {
	err := CheckDocument([]byte(`{"secret-marker-123": tru}`))
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("error %v", err)
	}
}

func canon(t testing.TB, s string, flags Flags) string {
	t.Helper()
	var c Canonicalizer
	out, end, err := c.Append(nil, []byte(s), SkipSpace([]byte(s), 0), 0, flags)
	if err != nil {
		t.Fatalf("canonical %q: %v", s, err)
	}
	if SkipSpace([]byte(s), end) != len(s) {
		t.Fatalf("canonical %q: stopped at %d", s, end)
	}
	return string(out)
}

func TestCanonicalForm(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b": 1, "a": [true, null, {"d": 2, "c": "x"}]}`, `{"a":[true,null,{"c":"x","d":2}],"b":1}`},
		{`"\u0041\n\/\u00e9"`, `"A\n/é"`},
		{`{"\u0062":1,"a":2}`, `{"a":2,"b":1}`},
		{`{"a":1,"a":0}`, `{"a":1,"a":0}`},
		{`[1.0, 1, -0, 1e2]`, `[1.0,1,-0,1e2]`},
		{`"\u0001\u001f\""`, `"\u0001\u001f\""`},
		{`"\ud800x"`, `"` + "\uFFFD" + `x"`},
	}
	for _, c := range cases {
		if got := canon(t, c.in, 0); got != c.want {
			t.Errorf("canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCanonicalFlags(t *testing.T) {
	in := `{"type":"tool_result","cache_control":{"type":"ephemeral"},"content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}`
	if got, want := canon(t, in, SkipCacheControl|ContentBlocks), `{"content":[{"text":"x","type":"text"}],"type":"tool_result"}`; got != want {
		t.Errorf("blocks: %s, want %s", got, want)
	}
	if got, want := canon(t, in, SkipContent), `{"cache_control":{"type":"ephemeral"},"type":"tool_result"}`; got != want {
		t.Errorf("head: %s, want %s", got, want)
	}
	var c Canonicalizer
	if _, _, err := c.Append(nil, []byte(in), 0, 0, SkipCacheControl|ContentBlocks); err != nil || len(c.Skipped) != 2 || c.Skipped[0] != -1 || c.Skipped[1] != 0 {
		t.Errorf("skipped %v %v", c.Skipped, err)
	}
	if _, _, _ = c.Append(nil, []byte(`{"cache_control":null}`), 0, 0, SkipCacheControl); len(c.Skipped) != 0 {
		t.Errorf("a null marker counted: %v", c.Skipped)
	}
	// OpenAI's markers go at any depth, and are counted.
	in = `{"role":"tool","prompt_cache_breakpoint":{"mode":"explicit"},"content":[{"type":"text","text":"x","prompt_cache_breakpoint":{"mode":"explicit"}},{"prompt_cache_breakpoint":null}]}`
	if got, want := canon(t, in, SkipBreakpoints), `{"content":[{"text":"x","type":"text"},{}],"role":"tool"}`; got != want {
		t.Errorf("breakpoints: %s, want %s", got, want)
	}
	if _, _, err := c.Append(nil, []byte(in), 0, 0, SkipBreakpoints); err != nil || c.Breakpoints != 2 || len(c.Skipped) != 0 {
		t.Errorf("breakpoints counted %d, skipped %v, %v", c.Breakpoints, c.Skipped, err)
	}
	// Only the object's own cache_control goes, not a nested one elsewhere.
	in = `{"input":{"cache_control":1},"cache_control":2}`
	if got, want := canon(t, in, SkipCacheControl), `{"input":{"cache_control":1}}`; got != want {
		t.Errorf("nested: %s, want %s", got, want)
	}
}

func TestCanonicalIgnoresOrderAndWhitespace(t *testing.T) {
	a := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	b := "{ \"messages\" : [ { \"content\" : [ { \"text\" : \"h\\u0069\", \"type\" : \"text\" } ], \"role\" : \"user\" } ], \"model\" : \"m\" }"
	if canon(t, a, 0) != canon(t, b, 0) {
		t.Fatalf("\n%s\n%s", canon(t, a, 0), canon(t, b, 0))
	}
}
