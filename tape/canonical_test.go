package tape

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
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
