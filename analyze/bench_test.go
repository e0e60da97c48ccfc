package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// genCapture writes NDJSON of about size bytes: agent requests of a few KiB each, spread over
// ten scopes, a third of them repeats of an earlier request with their members in another
// order.
func genCapture(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 16<<10)
	turn := strings.Repeat("The tests in pkg/store fail because the fixture is stale; regenerate it. ", 12)
	for i := 0; b.Len() < size; i++ {
		id := i
		if i%3 == 2 {
			id = i / 2 // a repeat of an earlier request
		}
		scope := fmt.Sprintf("team-%d", id%10)
		if i%3 == 2 {
			fmt.Fprintf(&b, `{"scope":%q,"usage":{"output_tokens":%d,"input_tokens":%d},"status":200,"headers":{"content-type":"application/json","anthropic-version":"2023-06-01"},"path":"/v1/messages","origin":"https://api.anthropic.com","method":"POST","body":{"stream":true,"messages":[{"content":[{"text":"Request %d. %s","type":"text"}],"role":"user"},{"content":[{"text":"%s","type":"text"}],"role":"assistant"},{"content":[{"text":"Continue with step %d.\n","type":"text"}],"role":"user"}],"max_tokens":4096,"model":"claude-sonnet-4-5"}}`+"\n",
				scope, 40+id%7, 1500+id, id, turn, turn, id)
			continue
		}
		fmt.Fprintf(&b, `{"method":"POST","origin":"https://api.anthropic.com","path":"/v1/messages","headers":{"anthropic-version":"2023-06-01","content-type":"application/json"},"body":{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"Request %d. %s"}]},{"role":"assistant","content":[{"type":"text","text":"%s"}]},{"role":"user","content":[{"type":"text","text":"Continue with step %d.\n"}]}]},"usage":{"input_tokens":%d,"output_tokens":%d},"scope":%q,"status":200}`+"\n",
			id, turn, turn, id, 1500+id, 40+id%7, scope)
	}
	return b.Bytes()
}

// BenchmarkAnalyze measures NDJSON throughput on 128 MiB (the input limit), generated once.
func BenchmarkAnalyze(b *testing.B) {
	data := genCapture(DefaultTotalBytes - 64<<10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Run(bytes.NewReader(data), FormatNDJSON, Options{})
		if err != nil || rep.ExactRepeatOpportunities == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnalyzeAlternative is the reflection-based alternative on 16 MiB of the same
// capture: encoding/json decoding each record into a struct and re-encoding the body (sorted
// keys) for the request key.
func BenchmarkAnalyzeAlternative(b *testing.B) {
	data := genCapture(16 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	type rec struct {
		Method, Origin, Path, Scope string
		Headers                     map[string]string
		Body                        any
		Usage                       map[string]json.Number
	}
	for b.Loop() {
		seen := map[string]bool{}
		for line := range bytes.Lines(data) {
			var r rec
			if err := json.Unmarshal(line, &r); err != nil {
				b.Fatal(err)
			}
			key, _ := json.Marshal(r.Body)
			seen[r.Scope+string(key)] = true
		}
	}
}
