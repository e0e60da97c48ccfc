package transcript

import (
	"encoding/json"
	"testing"
)

// The forkers read files other programs wrote: nothing they are given may panic them, and a
// fork they make is JSONL with the call cut off.

func FuzzForkClaude(f *testing.F) {
	f.Add(readFixture(f, claudeFixture), "call_mock_04_4")
	f.Add([]byte(`{"type":"assistant","version":"2.1.328","sessionId":"s","message":{"id":"m","content":[{"type":"tool_use","id":"c"}]}}`), "c")
	f.Add([]byte(`{"type":"user","version":"2.1.328","message":{"content":"hi"}}`+"\n"+`{"type":"assistant","message":{"id":"","content":[{"type":"tool_use","id":"c"}]}}`), "c")
	f.Fuzz(func(t *testing.T, b []byte, call string) {
		fk, err := forkClaude(b, "s", Cut{Call: call}, "f")
		if err != nil {
			return
		}
		checkJSONL(t, fk.data)
	})
}

func FuzzForkCodex(f *testing.F) {
	f.Add(readFixture(f, codexFixture), "call_mock_03_3")
	f.Add([]byte(`{"type":"session_meta","payload":{"id":"s","cli_version":"0.169.0"}}`+"\n"+`{"type":"response_item","payload":{"type":"function_call","call_id":"c"}}`), "c")
	f.Fuzz(func(t *testing.T, b []byte, call string) {
		fk, err := forkCodex(b, "s", Cut{Call: call}, "f")
		if err != nil {
			return
		}
		checkJSONL(t, fk.data)
	})
}

func checkJSONL(t *testing.T, b []byte) {
	for i, l := range lines(b) {
		if !json.Valid(l) {
			t.Fatalf("fork line %d is not JSON: %q", i+1, l)
		}
	}
}
