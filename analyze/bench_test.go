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
func genCapture(size int) []byte { return genCaptureOf(APIMessages, size) }

// genCaptureOf writes such a capture of one API's requests, in its documented shapes.
func genCaptureOf(api API, size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 16<<10)
	turn := strings.Repeat("The tests in pkg/store fail because the fixture is stale; regenerate it. ", 12)
	for i := 0; b.Len() < size; i++ {
		id := i
		if i%3 == 2 {
			id = i / 2 // a repeat of an earlier request
		}
		scope := fmt.Sprintf("team-%d", id%10)
		switch {
		case api == APIResponses && i%3 == 2:
			fmt.Fprintf(&b, `{"scope":%q,"usage":{"output_tokens_details":{"reasoning_tokens":%d},"output_tokens":%d,"input_tokens_details":{"cached_tokens":1024},"input_tokens":%d},"status":200,"headers":{"content-type":"application/json"},"path":"/v1/responses","origin":"https://api.openai.com","method":"POST","body":{"stream":true,"store":false,"prompt_cache_key":"s%d","input":[{"content":[{"text":"Request %d. %s","type":"input_text"}],"role":"user","type":"message"},{"content":[{"text":"%s","type":"output_text"}],"role":"assistant","type":"message"},{"output":"ok","call_id":"call_%d","type":"function_call_output"}],"model":"gpt-5.5"}}`+"\n",
				scope, id%7, 40+id%7, 1500+id, id%10, id, turn, turn, id)
		case api == APIResponses:
			fmt.Fprintf(&b, `{"method":"POST","origin":"https://api.openai.com","path":"/v1/responses","headers":{"content-type":"application/json"},"body":{"model":"gpt-5.5","stream":true,"store":false,"prompt_cache_key":"s%d","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Request %d. %s"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"%s"}]},{"type":"function_call_output","call_id":"call_%d","output":"ok"}]},"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":1024},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":%d}},"scope":%q,"status":200}`+"\n",
				id%10, id, turn, turn, id, 1500+id, 40+id%7, id%7, scope)
		case i%3 == 2:
			fmt.Fprintf(&b, `{"scope":%q,"usage":{"output_tokens":%d,"input_tokens":%d},"status":200,"headers":{"content-type":"application/json","anthropic-version":"2023-06-01"},"path":"/v1/messages","origin":"https://api.anthropic.com","method":"POST","body":{"stream":true,"messages":[{"content":[{"text":"Request %d. %s","type":"text"}],"role":"user"},{"content":[{"text":"%s","type":"text"}],"role":"assistant"},{"content":[{"text":"Continue with step %d.\n","type":"text"}],"role":"user"}],"max_tokens":4096,"model":"claude-sonnet-4-5"}}`+"\n",
				scope, 40+id%7, 1500+id, id, turn, turn, id)
		default:
			fmt.Fprintf(&b, `{"method":"POST","origin":"https://api.anthropic.com","path":"/v1/messages","headers":{"anthropic-version":"2023-06-01","content-type":"application/json"},"body":{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"Request %d. %s"}]},{"role":"assistant","content":[{"type":"text","text":"%s"}]},{"role":"user","content":[{"type":"text","text":"Continue with step %d.\n"}]}]},"usage":{"input_tokens":%d,"output_tokens":%d},"scope":%q,"status":200}`+"\n",
				id, turn, turn, id, 1500+id, 40+id%7, scope)
		}
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

// BenchmarkAnalyzeResponses is BenchmarkAnalyze on Responses records, which are read once
// more at their top level for the members that hold provider state.
func BenchmarkAnalyzeResponses(b *testing.B) {
	data := genCaptureOf(APIResponses, DefaultTotalBytes-64<<10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Run(bytes.NewReader(data), FormatNDJSON, Options{})
		if err != nil || rep.APIs.Responses.ExactRepeatOpportunities == 0 {
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
