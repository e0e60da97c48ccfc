package mockmodel

import (
	"net/http/httptest"
	"os"
	"testing"
)

// fuzzAPI checks that a request, whatever it holds, is read or refused without a panic, and
// that an answer to what was read can always be written, as JSON and as events.
func fuzzAPI(f *testing.F, a api, seeds ...string) {
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		} else {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := a.parse(nil, body)
		if err != nil {
			return
		}
		c.Raw = body
		for _, stream := range []bool{false, true} {
			c.Stream = stream
			calls := c.Calls()
			for _, turn := range []Turn{{Text: c.LastUserText()}, {ToolCalls: calls}} {
				if err := a.write(httptest.NewRecorder(), &c, turn); err != nil {
					t.Fatalf("write: %v", err)
				}
			}
		}
	})
}

func FuzzResponsesParse(f *testing.F) {
	fuzzAPI(f, responses{}, "testdata/codex-0.169.0-responses.json", `{"input":"hi"}`,
		`{"tools":[{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"}]}],"input":[{"type":"function_call","call_id":"c","namespace":"n","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"ok"}]}]}`)
}

func FuzzChatParse(f *testing.F) {
	fuzzAPI(f, chat{}, "testdata/cline-3.0.65-chat.json", `{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
}
