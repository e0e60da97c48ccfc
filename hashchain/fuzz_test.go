package hashchain

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// jsonNumber marshals as the literal it holds.
type jsonNumber string

func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// FuzzLine checks the verifier's fast line scanner against the reference parser: on every
// input they agree on whether the line is a valid canonical entry, and on its fields.
func FuzzLine(f *testing.F) {
	line, _ := encodeEntry(0, "2026-01-02T03:04:05.5Z", "checkpoint", []byte(`{"a":[1,2.5,-0.001,1e+21,"x\u0001\n",true,null,{}],"b":{"\n":false,"😂":1,"דּ":2}}`), [32]byte{})
	f.Add(line)
	line2, _ := encodeEntry(12345, "2026-01-02T03:04:05Z", "k\"\\", []byte(`{}`), [32]byte{1, 2, 3})
	f.Add(line2)
	for _, s := range []string{
		`{"data":{},"hash":"x","kind":"k","prev":"0","seq":0,"time":"t"}`,
		`{"data":{"b":1,"a":2},"hash":"` + ZeroHash + `","kind":"k","prev":"` + ZeroHash + `","seq":0,"time":"2026-01-02T03:04:05Z"}`,
		`{"data":{"a":1.0},"hash":"` + ZeroHash + `","kind":"k","prev":"` + ZeroHash + `","seq":01,"time":"2026-01-02T03:04:05Z"}`,
		`{"data":{"a":"\u00e9"},"hash":"` + ZeroHash + `","kind":"","prev":"` + ZeroHash + `","seq":-0,"time":"2026-01-02T03:04:05Z"}`,
		`{"data":{"a":"\/"},"hash":"` + ZeroHash + `","kind":"k","prev":"` + ZeroHash + `","seq":9007199254740992,"time":"2026-01-02T03:04:05Z"}`,
		`[]`, `{}`, "", "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, fastOK := scanLine(line)
		slow, p, detail := parseLineSlow(line)
		if fastOK != (p == "") {
			t.Fatalf("fast scanner says ok=%v, reference says %q (%s) for %q", fastOK, p, detail, line)
		}
		if fastOK && fast != slow {
			t.Fatalf("fields differ: fast %+v, reference %+v for %q", fast, slow, line)
		}
		if !fastOK {
			return
		}
		// A valid line re-encodes to itself, and its hashed bytes are the line without "hash".
		e, err := decodeEntry(line)
		if err != nil {
			t.Fatalf("decode %q: %v", line, err)
		}
		re, _ := encodeEntry(e.Seq, e.Time, e.Kind, e.Data, fast.prev)
		var h lineHasher
		sum := fast.sum(line, &h)
		if want := append(append([]byte(nil), line[:fast.cut0]...), line[fast.cut1:]...); !json.Valid(want) {
			t.Fatalf("hashed bytes are not JSON: %q", want)
		}
		if fast.hash == sum && !bytes.Equal(re, line) {
			t.Fatalf("re-encoding differs:\n%q\n%q", re, line)
		}
	})
}

// FuzzCanonicalJSON checks that canonical JSON is a fixed point that the fast scanner accepts,
// and that whatever the strict parser accepts encoding/json accepts too.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"b":[1,2,{"c":null}],"a":"x"}`, `1E30`, `"\ud83d\ude02"`, `[0.000001,1e-7,-0]`, `{"\u0080":1,"1":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		c, err := CanonicalJSON(src)
		if err != nil {
			return
		}
		if !json.Valid(src) || !json.Valid(c) {
			t.Fatalf("accepted invalid JSON %q -> %q", src, c)
		}
		c2, err := CanonicalJSON(c)
		if err != nil || !bytes.Equal(c, c2) {
			t.Fatalf("not a fixed point: %q -> %q -> %q (%v)", src, c, c2, err)
		}
		if end, ok := scanValue(c, 0, 1); !ok || end != len(c) {
			t.Fatalf("fast scanner rejects canonical %q", c)
		}
	})
}

// FuzzStamp checks the stamp decoder (chain.stamp is read from the store, which anyone with
// access can write): it never panics, and accepts exactly the encodings of stamps.
func FuzzStamp(f *testing.F) {
	f.Add(stamp{ID: fileID{Dev: 1, Ino: 2, Size: 3, Ctime: 4}, N: 5, Last: [32]byte{6}}.encode())
	f.Add([]byte(stampMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ok := decodeStamp(b)
		if ok && !bytes.Equal(s.encode(), b) {
			t.Fatalf("decoded %x as %+v, which encodes differently", b, s)
		}
	})
}

// FuzzNoteSigners: any anchor file's text (outside input) yields names without panicking, each
// non-empty and free of spaces.
func FuzzNoteSigners(f *testing.F) {
	f.Add([]byte("origin\n3\nroot\n\n\u2014 alice.example/rewind c2ln\n\u2014 bob c2ln\n"))
	f.Add([]byte("origin\n3\nroot\n"))
	f.Add([]byte("\n\n\u2014 \n\u2014  x\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		for _, n := range NoteSigners(text) {
			if n == "" || strings.Contains(n, " ") {
				t.Fatalf("signer %q from %q", n, text)
			}
		}
	})
}
