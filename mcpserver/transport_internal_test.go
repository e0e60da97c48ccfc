package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestRecoverID(t *testing.T) {
	for msg, want := range map[string]string{
		`{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":`: `5`,
		`{"id":"abc"`: `"abc"`,
		`{"params":{"id":1,"x":[{"id":2}]},"id":-3.5e2}`: `-3.5e2`,
		`{"params":{"id":1},"method":"m"`:                ``,
		`{"id":{"a":1}}`:                                 ``,
		`{"id":null}`:                                    ``,
		`{"id":true}`:                                    ``,
		`["id",1]`:                                       ``,
		`{"a":"id","id":"\u00e9\"q"}`:                    `"é\"q"`,
		`{"id"`:                                          ``,
		`{"x":{"y":[1,2,{"id":9}]},"z":"id","id":10,"id":11}`:         `10`,
		`{"a":[],"b":{},"id":12}`:                                     `12`,
		`   {"id":13}`:                                                `13`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"g"`: ``,
	} {
		if got := string(recoverID([]byte(msg))); got != want {
			t.Errorf("recoverID(%s) = %s, want %s", msg, got, want)
		}
	}
}

// FuzzScreenLines: whatever arrives on stdin, every line forwarded to the go-sdk is one it
// takes (one JSON-RPC message, not a batch, within the limit), and every answer is one JSON-RPC
// error response line whose id is null, a string or a number.
func FuzzScreenLines(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"guard_effect","arguments":{"key":"k","payload":{"blob":"` + strings.Repeat("x", 80) + `"}}}}` + "\n",
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\n[1]\n\n \r\n{}\n",
		`{"jsonrpc":"2.0","id":2,"result":{}}` + "\r\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"\xff\xfe{\"id\":1}\n{\"jsonrpc\":\"1.0\",\"id\":[]}\n",
	} {
		f.Add([]byte(s))
	}
	const limit = 96
	f.Fuzz(func(t *testing.T, in []byte) {
		var fwd, reply bytes.Buffer
		if err := screenLines(bytes.NewReader(in), &fwd, &reply, nil, limit); err != nil {
			t.Fatalf("screenLines: %v", err)
		}
		for line := range bytes.Lines(fwd.Bytes()) {
			msg := bytes.TrimSuffix(line, []byte("\n"))
			if len(msg) > limit || len(msg) == 0 || msg[0] == '[' || !json.Valid(msg) || bytes.ContainsAny(msg, "\n") {
				t.Fatalf("forwarded %q", line)
			}
			if _, err := jsonrpc.DecodeMessage(msg); err != nil {
				t.Fatalf("forwarded %q, which the go-sdk refuses: %v", line, err)
			}
		}
		for line := range bytes.Lines(reply.Bytes()) {
			var r struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			if err := json.Unmarshal(line, &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil || r.Error.Message == "" {
				t.Fatalf("answered %q (%v)", line, err)
			}
			var id any
			if err := json.Unmarshal(r.ID, &id); err != nil {
				t.Fatalf("answer id %s: %v", r.ID, err)
			}
			switch id.(type) {
			case nil, string, float64:
			default:
				t.Fatalf("answer id %s is neither null, a string nor a number", r.ID)
			}
		}
	})
}
