package jsonscan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzValid holds the scanner to encoding/json's notion of validity.
func FuzzValid(f *testing.F) {
	for _, c := range validityCases {
		if len(c) < 1000 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid = %v, encoding/json says %v", got, want)
		}
	})
}

// FuzzCanonical checks the canonical form against a slow reference: decoding with
// encoding/json. The canonical form must decode to the same value as the input, must be
// canonical already (idempotent), and must not depend on member order.
func FuzzCanonical(f *testing.F) {
	for _, c := range validityCases {
		if len(c) < 1000 {
			f.Add([]byte(c))
		}
	}
	f.Add([]byte(`{"b":{"y":1,"x":[2,{"q":"\u00e9","p":"\n"}]},"a":"z"}`))
	f.Add([]byte(`{"content":[{"type":"input_text","text":"x","prompt_cache_breakpoint":{"mode":"explicit"}},{"prompt_cache_breakpoint":null}],"prompt_cache_breakpoint":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Canonicalizer
		i := SkipSpace(data, 0)
		out, end, err := c.Append(nil, data, i, 0, 0)
		valid := json.Valid(data)
		if err == nil && SkipSpace(data, end) != len(data) {
			err = errAt(end, "trailing")
		}
		if (err == nil) != valid {
			t.Fatalf("canonical error %v, encoding/json valid %v", err, valid)
		}
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form is not valid JSON: %q", out)
		}
		again, _, err := c.Append(nil, out, 0, 0, 0)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q then %q (%v)", out, again, err)
		}
		// The reference comparison needs values encoding/json decodes faithfully: valid
		// UTF-8 (it replaces invalid bytes) and no duplicate keys (it keeps the last).
		if !utf8.Valid(data) || hasDuplicateKeys(data) {
			return
		}
		var want, got any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		dec = json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("canonical form decodes differently:\n in %q\nout %q", data, out)
		}
		// encoding/json's own rendering of the same value (other escapes, sorted keys) must
		// have the same canonical form.
		var ref bytes.Buffer
		enc := json.NewEncoder(&ref)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(want); err != nil {
			t.Fatal(err)
		}
		refCanon, _, err := c.Append(nil, ref.Bytes(), 0, 0, 0)
		if err != nil || !bytes.Equal(refCanon, out) {
			t.Fatalf("canonical forms differ:\n%q\n%q", out, refCanon)
		}
		// SkipBreakpoints leaves out every prompt_cache_breakpoint member, at any depth, and
		// counts the non-null ones.
		skipped, _, err := c.Append(nil, data, i, 0, SkipBreakpoints)
		if err != nil {
			t.Fatal(err)
		}
		var stripped any
		dec = json.NewDecoder(bytes.NewReader(skipped))
		dec.UseNumber()
		if err := dec.Decode(&stripped); err != nil {
			t.Fatal(err)
		}
		if n := stripBreakpoints(want); !reflect.DeepEqual(want, stripped) || n != c.Breakpoints {
			t.Fatalf("SkipBreakpoints: %q (%d counted, %d in the value)", skipped, c.Breakpoints, n)
		}
	})
}

// stripBreakpoints deletes every prompt_cache_breakpoint member of a decoded value in place
// and returns how many non-null ones it deleted.
func stripBreakpoints(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if b, ok := x["prompt_cache_breakpoint"]; ok {
			if b != nil {
				n++
			}
			delete(x, "prompt_cache_breakpoint")
		}
		for _, e := range x {
			n += stripBreakpoints(e)
		}
	case []any:
		for _, e := range x {
			n += stripBreakpoints(e)
		}
	}
	return n
}

func hasDuplicateKeys(data []byte) bool {
	dup := false
	var walk func(i, depth int) int
	walk = func(i, depth int) int {
		switch data[i] {
		case '{':
			o, _ := OpenObject(data, i, depth)
			seen := map[string]bool{}
			for o.Next() {
				k := string(AppendUnquoted(nil, o.Key()))
				if seen[k] {
					dup = true
				}
				seen[k] = true
				o.Consumed(walk(o.Value(), o.Depth()))
			}
			return o.End()
		case '[':
			a, _ := OpenArray(data, i, depth)
			for a.Next() {
				a.Consumed(walk(a.Value(), a.Depth()))
			}
			return a.End()
		default:
			end, _ := SkipValue(data, i, depth)
			return end
		}
	}
	walk(SkipSpace(data, 0), 0)
	return dup
}
