package mockanthropic

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzEvents feeds arbitrary response bodies to the SSE renderer (and request bodies to
// RequestKey): whatever a caller records, the mock fails with an error, never a panic, and a
// stream it renders always ends with message_stop.
func FuzzEvents(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpus, "*", "0[1-3].*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"content":[{"type":"tool_use","input":{"a":1e400}}]}`))
	f.Add([]byte(`{"content":[{"type":"thinking","thinking":"x","signature":"s"}],"usage":{"output_tokens":"x"}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		RequestKey(b)
		evs, err := Events(b)
		if err != nil {
			return
		}
		if len(evs) < 3 || evs[0].Name != "message_start" || evs[len(evs)-1].Name != "message_stop" {
			t.Fatalf("stream of %d events: %v … %v", len(evs), evs[0].Name, evs[len(evs)-1].Name)
		}
	})
}
