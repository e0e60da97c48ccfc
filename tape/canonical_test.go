package tape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalJSON(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`, true},
		{" {\n \"a\" : [ 1 , 2 ] } \n", `{"a":[1,2]}`, true},
		{`{"z":{"y":1,"x":[{"d":0,"c":0}]}}`, `{"z":{"x":[{"c":0,"d":0}],"y":1}}`, true},
		{`"\u0041\n\u001f\"\\\/é\u00e9"`, `"A\u000a\u001f\"\\/éé"`, true},
		{`"<>&\u2028"`, "\"<>&\u2028\"", true},
		{`[1.0, 1, -0, 1e2, 1E+2]`, `[1.0,1,-0,1e2,1E+2]`, true}, // numbers as written
		{`[true,false,null]`, `[true,false,null]`, true},
		{`"\ud83d\ude00"`, `"😀"`, true}, // a surrogate pair is a character
		{`"\ud800"`, ``, false},         // a lone surrogate is not
		{`"\ude00"`, ``, false},
		{`"\ud83d\u0041"`, ``, false},
		{`{"\u0001":1,"!":2,"\"":3,"\\":4,"\u0000":5}`, `{"\u0000":5,"\u0001":1,"!":2,"\"":3,"\\":4}`, true}, // decoded byte order
		{`{"a\u0000b":1,"a":2}`, `{"a":2,"a\u0000b":1}`, true},
		{`{"A":1,"\u0041":2}`, ``, false}, // a duplicate, spelt differently
		{`[01]`, ``, false},
		{`[1.]`, ``, false},
		{`[.5]`, ``, false},
		{`[1e]`, ``, false},
		{`[-]`, ``, false},
		{`["a	b"]`, ``, false}, // a raw control character
		{`["\x"]`, ``, false},
		{`tru`, ``, false},
		{`{}`, `{}`, true},
		{`[]`, `[]`, true},
		{`{"é":1,"e":2,"f":3}`, `{"e":2,"f":3,"é":1}`, true}, // UTF-8 byte order
		{`{"a":1,"a":2}`, ``, false},                         // duplicate keys
		{`{"a":{"b":1,"b":1}}`, ``, false},
		{``, ``, false},
		{`   `, ``, false},
		{`{"a":1}{}`, ``, false},
		{`{"a":1`, ``, false},
		{`[1,]`, ``, false},
		{`{'a':1}`, ``, false},
		{"\"\xff\"", ``, false}, // invalid UTF-8
		{`NaN`, ``, false},
		{strings.Repeat("[", 1001) + strings.Repeat("]", 1001), ``, false}, // too deep
		{strings.Repeat("[", 1000) + strings.Repeat("]", 1000), strings.Repeat("[", 1000) + strings.Repeat("]", 1000), true},
	} {
		got, ok := CanonicalJSON([]byte(tc.in))
		if ok != tc.ok || string(got) != tc.want {
			t.Errorf("CanonicalJSON(%.40q) = %.40q, %v; want %.40q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRequestHashVector pins the canonical request hash: it is part of the on-disk format (a
// change would make every recorded tape miss), so a change must be deliberate. The vector was
// computed from the documented layout alone, in Python:
//
//	s = lambda b: struct.pack('>I', len(b)) + b
//	m = b"agent-rewind/tape request v1\x00" + s(b"POST") + s(b"/v1/messages") + struct.pack('>I', 3)
//	m += s(b"anthropic-beta") + s(b"b1") + s(b"anthropic-beta") + s(b"b2")
//	m += s(b"anthropic-version") + s(b"2023-06-01")
//	m += b"j" + s(b'{"messages":[],"model":"m"}')
//	hashlib.sha256(m).hexdigest()
func TestRequestHashVector(t *testing.T) {
	r := Request{
		Method: "POST",
		Path:   "/v1/messages",
		Header: http.Header{"Anthropic-Version": {"2023-06-01"}, "Anthropic-Beta": {"b1", "b2"}, "X-Api-Key": {"k"}},
		Body:   []byte(`{"model":"m","messages":[]}`),
	}
	const want = "sha256:e701eb263e1fb44724823d75a58764067bb7eed609c0877812e550e43ee8854d"
	if got := RequestHash(r, DefaultAnswerHeaders).String(); got != want {
		t.Errorf("RequestHash = %s, want %s", got, want)
	}
	// Non-JSON bodies hash byte for byte, and differ from their JSON reading.
	raw := r
	raw.Body = []byte(`{"model":"m","messages":[]`)
	if RequestHash(raw, DefaultAnswerHeaders) == RequestHash(r, DefaultAnswerHeaders) {
		t.Error("a broken JSON body hashes like a valid one")
	}
	// The order of an answer header's values matters; answer header names do not care for case.
	swapped := r
	swapped.Header = http.Header{"anthropic-version": {"2023-06-01"}, "Anthropic-Beta": {"b2", "b1"}}
	if RequestHash(swapped, DefaultAnswerHeaders) == RequestHash(r, DefaultAnswerHeaders) {
		t.Error("reordered anthropic-beta values hash alike")
	}
	if RequestHash(r, []string{"anthropic-version", "ANTHROPIC-BETA"}) != RequestHash(r, DefaultAnswerHeaders) {
		t.Error("answer header names are case-sensitive")
	}
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"]}`, `"\u00e9\ud800"`, `{"a":1,"a":2}`, `[1e5,-0.0]`, `{"":{"":""}}`, " [ ] ", `{"a":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, ok := CanonicalJSON(body)
		// Differential check against a reference built on encoding/json.
		ref, refOK := referenceCanonical(body)
		if ok && (!refOK || string(ref) != string(c)) {
			t.Fatalf("CanonicalJSON(%q) = %q; the reference says %q, %v", body, c, ref, refOK)
		}
		if refOK && !ok && !strings.Contains(strings.ToLower(string(body)), `\ud`) && !strings.Contains(strings.ToLower(string(body)), `\ue`) {
			t.Fatalf("CanonicalJSON(%q) failed; the reference says %q (lone surrogates aside, they agree)", body, ref)
		}
		if !ok {
			if json.Valid(body) && !strings.Contains(string(body), `"`) && !strings.Contains(string(body), "[[[[") {
				// Without strings there are no keys, so no duplicates; shallow, so not too deep.
				t.Fatalf("valid JSON %q has no canonical form", body)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("invalid JSON %q has a canonical form %q", body, c)
		}
		if !json.Valid(c) {
			t.Fatalf("canonical form %q of %q is not valid JSON", c, body)
		}
		again, ok := CanonicalJSON(c)
		if !ok || string(again) != string(c) {
			t.Fatalf("canonical form is not a fixed point: %q -> %q", c, again)
		}
		var a, b any
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("canonical form %q of %q means something else", c, body)
		}
	})
}

func FuzzRequestHash(f *testing.F) {
	f.Add("POST", "/v1/messages", "anthropic-beta", "x", []byte(`{"a":1}`))
	f.Add("GET", "/", "", "", []byte{})
	f.Fuzz(func(t *testing.T, method, path, hname, hvalue string, body []byte) {
		r := Request{Method: method, Path: path, Header: http.Header{hname: {hvalue}}, Body: body}
		h1 := RequestHash(r, DefaultAnswerHeaders)
		if h2 := RequestHash(r, DefaultAnswerHeaders); h1 != h2 {
			t.Fatal("RequestHash is not deterministic")
		}
		// Adding a header that does not change the answer does not change the hash.
		r.Header = r.Header.Clone()
		r.Header.Add("X-Api-Key", "secret")
		if RequestHash(r, DefaultAnswerHeaders) != h1 && !strings.EqualFold(hname, "x-api-key") {
			t.Fatal("a credential header changed the hash")
		}
	})
}

// referenceCanonical is an independent canonicaliser built on encoding/json's tokenizer, for the
// differential fuzz test. It differs from CanonicalJSON only on lone surrogate escapes, which
// encoding/json replaces with U+FFFD and CanonicalJSON refuses.
func referenceCanonical(body []byte) ([]byte, bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	out, err := refValue(d, nil, 0)
	if err != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	return out, true
}

var errRef = errors.New("not canonical")

func refValue(d *json.Decoder, dst []byte, depth int) ([]byte, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, errRef
	}
	switch v := tok.(type) {
	case json.Delim:
		if depth >= maxJSONDepth {
			return nil, errRef
		}
		if v == '[' {
			dst = append(dst, '[')
			for i := 0; d.More(); i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				if dst, err = refValue(d, dst, depth+1); err != nil {
					return nil, err
				}
			}
			if _, err := d.Token(); err != nil {
				return nil, errRef
			}
			return append(dst, ']'), nil
		}
		type member struct {
			key   string
			value []byte
		}
		var ms []member
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, errRef
			}
			val, err := refValue(d, nil, depth+1)
			if err != nil {
				return nil, err
			}
			ms = append(ms, member{k.(string), val})
		}
		if _, err := d.Token(); err != nil {
			return nil, errRef
		}
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		dst = append(dst, '{')
		for i, m := range ms {
			if i > 0 {
				if ms[i-1].key == m.key {
					return nil, errRef
				}
				dst = append(dst, ',')
			}
			dst = refString(dst, m.key)
			dst = append(dst, ':')
			dst = append(dst, m.value...)
		}
		return append(dst, '}'), nil
	case string:
		return refString(dst, v), nil
	case json.Number:
		return append(dst, v...), nil
	case bool:
		return fmt.Append(dst, v), nil
	case nil:
		return append(dst, "null"...), nil
	}
	return nil, errRef
}

func refString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20:
			dst = fmt.Appendf(dst, "\\u%04x", r)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}
