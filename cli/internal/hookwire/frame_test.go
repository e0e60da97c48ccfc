package hookwire

import (
	"bytes"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

func TestRequestRoundTrip(t *testing.T) {
	for _, r := range []Request{
		{Op: OpGuard, Version: "v1 abc", Dir: "/w", Umask: 0o22, StdinRead: true, Stdin: []byte("{}"), Args: []string{"--workspace", "", "guard"}, Env: []string{"HOME=/h", "A="}},
		{Op: OpStatus},
		{Op: OpGuard, Args: []string{""}, Stdin: bytes.Repeat([]byte{0}, 70000)},
	} {
		p, err := ReadMessage(bytes.NewReader(AppendRequest(nil, &r)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeRequest(p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stdin == nil {
			r.Stdin = []byte{} // a field decodes as an empty slice
		}
		if !reflect.DeepEqual(&r, got) {
			t.Errorf("round trip: sent %+v, got %+v", r, got)
		}
	}
}

func TestAnswerRoundTrip(t *testing.T) {
	a := Answer{Kind: Accepted, Code: -1, Stdout: []byte("out"), Stderr: []byte("err\n")}
	p, err := ReadMessage(bytes.NewReader(AppendAnswer(nil, &a)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeAnswer(p)
	if err != nil || got.Kind != a.Kind || got.Code != a.Code || string(got.Stdout) != "out" || string(got.Stderr) != "err\n" {
		t.Fatalf("%+v, %v", got, err)
	}
}

// TestShortMessage: a message cut anywhere is an error, never a shorter message.
func TestShortMessage(t *testing.T) {
	m := AppendRequest(nil, &Request{Op: OpGuard, Args: []string{"guard"}, Stdin: []byte("{}")})
	for n := range len(m) {
		if p, err := ReadMessage(bytes.NewReader(m[:n])); err == nil {
			if _, err := DecodeRequest(p); err == nil {
				t.Fatalf("%d of %d bytes decoded", n, len(m))
			}
		}
	}
}

// FuzzDecode: any bytes decode without a panic, and what decodes encodes back the same.
func FuzzDecode(f *testing.F) {
	f.Add(AppendRequest(nil, &Request{Op: OpGuard, Version: "devel", Args: []string{"guard"}, Env: []string{"HOME=/h"}}))
	f.Add(AppendAnswer(nil, &Answer{Kind: Result, Code: 2, Stderr: []byte("no")}))
	f.Add([]byte("ARH1\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadMessage(bytes.NewReader(b))
		if err != nil {
			return
		}
		if r, err := DecodeRequest(p); err == nil {
			p2, err := ReadMessage(bytes.NewReader(AppendRequest(nil, r)))
			if err != nil {
				t.Fatal(err)
			}
			if r2, err := DecodeRequest(p2); err != nil || r2.Op != r.Op || len(r2.Args) != len(r.Args) || len(r2.Env) != len(r.Env) || !bytes.Equal(r2.Stdin, r.Stdin) {
				t.Fatalf("%+v re-encoded as %+v (%v)", r, r2, err)
			}
		}
		if a, err := DecodeAnswer(p); err == nil {
			a2, err := DecodeAnswer(AppendAnswer(nil, a)[8:])
			if err != nil || a2.Kind != a.Kind || a2.Code != a.Code {
				t.Fatalf("%+v re-encoded as %+v (%v)", a, a2, err)
			}
		}
	})
}

func TestSocketNeedsAnAbsoluteStateFolder(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	// An absolute path is the system's: a drive and a backslash on Windows.
	abs, base, want := "/s", map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/agent-rewind/hook-server/sock"
	if runtime.GOOS == "windows" {
		abs, base, want = `C:\s`, map[string]string{"LOCALAPPDATA": `C:\x`}, `C:\x\agent-rewind\hook-server\sock`
	}
	if s, err := Socket(env(map[string]string{"REWIND_STATE_DIR": abs})); err != nil || s != filepath.Join(abs, "hook-server", "sock") {
		t.Fatalf("%q, %v", s, err)
	}
	if _, err := Socket(env(map[string]string{"REWIND_STATE_DIR": "rel"})); err != ErrRelativeState {
		t.Fatalf("a relative state folder: %v", err)
	}
	if s, err := Socket(env(base)); err != nil || s != want {
		t.Fatalf("%q, %v", s, err)
	}
}
