package barrier

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestCanonicalVectors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, `null`},
		{` null `, `null`},
		{`{"b":1,"a":[true,false,null]}`, `{"a":[true,false,null],"b":1}`},
		{"{\n  \"z\": {\"y\": 2, \"x\": 1},\n  \"a\": \"s\"\n}", `{"a":"s","z":{"x":1,"y":2}}`},
		{`1.0`, `1`},
		{`1e0`, `1`},
		{`-0`, `0`},
		{`-0.0`, `0`},
		{`1.5`, `1.5`},
		{`1e21`, `1e+21`},
		{`2.5E-7`, `2.5e-07`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`}, // integers keep every digit
		{`9007199254740993.0`, `9.007199254740992e+15`},
		{`"\u00e9\u0001\t\"\\/<>&"`, "\"é\\u0001\\t\\\"\\\\/<>&\""},
		{`"\u2028"`, "\"\u2028\""},
		{`{"é":1,"e":2,"f":3}`, `{"e":2,"f":3,"é":1}`}, // UTF-8 byte order
		{`[]`, `[]`},
		{`{}`, `{}`},
	} {
		got, err := Canonical([]byte(c.in))
		if err != nil {
			t.Errorf("Canonical(%s): %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCanonicalRejects(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"a":1}`, // repeated member
		`{"a":1} {"b":2}`,
		`{"a":`,
		`[1,]`,
		"\"\xff\"",
		`1e400`,
		`nul`,
	} {
		if _, err := Canonical([]byte(in)); !errors.Is(err, ErrNotCanonicalizable) {
			t.Errorf("Canonical(%q) = %v, want ErrNotCanonicalizable", in, err)
		}
	}
}

func TestFingerprint(t *testing.T) {
	fp, err := Fingerprint([]byte(`{ "b": 2, "a": 1 }`))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(`{"a":1,"b":2}`))
	if want := "sha256:" + hex.EncodeToString(sum[:]); fp != want {
		t.Errorf("Fingerprint = %s, want %s", fp, want)
	}
}

// FuzzCanonical checks that canonicalization never panics, yields valid JSON, and is idempotent
// and faithful: the canonical form decodes to the same value as the input.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,2.5,"x",null,true]}`, `"\u00e9"`, `1e21`, `-0`, `{"a":{"b":{"c":[]}}}`, `[{"x":1},{"x":1.0}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Canonical(data)
		if err != nil {
			return
		}
		if !json.Valid(c) {
			t.Fatalf("Canonical(%q) = %q, not valid JSON", data, c)
		}
		c2, err := Canonical(c)
		if err != nil || string(c2) != string(c) {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", data, c, c2, err)
		}
		var a, b any
		if json.Unmarshal(data, &a) == nil && json.Unmarshal(c, &b) == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q -> %q", data, c)
		}
	})
}
