package cacheplan

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// keepItems cuts the array member name of a recorded body to its first n elements, keeping
// every other byte: the request the client sent a turn earlier.
func keepItems(t testing.TB, body []byte, name string, n int) []byte {
	t.Helper()
	top, _ := jsonscan.OpenObject(body, jsonscan.SkipSpace(body, 0), 0)
	for top.Next() {
		if !top.KeyIs(name) {
			continue
		}
		a, _ := jsonscan.OpenArray(body, top.Value(), top.Depth())
		for a.Next() {
			if a.Index() == n {
				end := a.Value() - 1 // the comma before element n
				close, _ := jsonscan.SkipValue(body, top.Value(), top.Depth())
				return append(append([]byte{}, body[:end]...), body[close-1:]...)
			}
		}
	}
	t.Fatalf("%s has no element %d", name, n)
	return nil
}

// codexTurnID is the per-turn id Codex sends in client_metadata.
const codexTurnID = "01a2340c-ed1a-7850-afa2-c158e1e950f4"

func TestCompareOpenAIRecorded(t *testing.T) {
	codex := readFixture(t, codexRecording)
	// The request Codex sent before this one: the same input up to the tool search's output,
	// under another turn id.
	codexPrev := bytes.Replace(keepItems(t, codex, "input", 6), []byte(codexTurnID), []byte("01a2340c-ed00-7000-8000-000000000001"), 1)
	cline := readFixture(t, clineRecording)
	replace := func(body []byte, old, new string) []byte {
		t.Helper()
		if !bytes.Contains(body, []byte(old)) {
			t.Fatalf("no %q in the recording", old)
		}
		return bytes.Replace(body, []byte(old), []byte(new), 1)
	}
	for _, c := range []struct {
		name             string
		prev, cur        []byte
		format           Format
		class            Class
		path             string
		settings         []string
		ignored          []string
		appendedMessages int
		moved            bool
		warnings         []string
		reusable         func(p, c []byte) bool
	}{
		{"codex next turn", codexPrev, codex, FormatResponses, ClassAppendedMessages, "", nil, []string{"client_metadata"}, 2, false, nil,
			func(p, _ []byte) bool { return true }},
		{"codex unchanged", codex, codex, FormatResponses, ClassUnchanged, "", nil, nil, 0, false, nil, nil},
		{"codex new cache key", codexPrev, replace(codex, `"prompt_cache_key":"01a2340c`, `"prompt_cache_key":"ffa2340c`), FormatResponses,
			ClassDivergence, "prompt_cache_key", []string{"prompt_cache_key"}, []string{"client_metadata"}, 2, false, nil, nil},
		{"codex reasoning effort", codexPrev, replace(codex, `"reasoning":{"effort":"medium"}`, `"reasoning":{"effort":"high"}`), FormatResponses,
			ClassDivergence, "reasoning", []string{"reasoning"}, []string{"client_metadata"}, 2, false, nil, nil},
		{"codex rewritten history", codexPrev, replace(codex, `"text":"write a file"`, `"text":"write two files"`), FormatResponses,
			ClassDivergence, "input[3].content[0]", nil, []string{"client_metadata"}, 0, false, nil, nil},
		{"codex moved breakpoint", codex, replace(codex, `"text":"write a file"`, `"text":"write a file","prompt_cache_breakpoint":{"mode":"explicit"}`), FormatResponses,
			ClassUnchanged, "", nil, nil, 0, true, nil, nil},
		{"cline next turn", keepItems(t, cline, "messages", 2), cline, FormatOpenAIChat, ClassAppendedMessages, "", nil, nil, 2, false, []string{"no-prompt-cache-key"}, nil},
		{"cline new tools", keepItems(t, cline, "messages", 2), replace(cline, `"name":"read_files"`, `"name":"read_file"`), FormatOpenAIChat,
			ClassDivergence, "tools[0]", []string{"tools"}, nil, 2, false, []string{"no-prompt-cache-key"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compare(c.prev, c.cur)
			if err != nil {
				t.Fatal(err)
			}
			if r.Format != c.format || r.Detection != DetectedByShape || r.Class != c.class || r.FirstChangedPath != c.path ||
				!slices.Equal(r.ChangedSettings, append([]string{}, c.settings...)) || !slices.Equal(r.IgnoredSettings, append([]string{}, c.ignored...)) ||
				r.AppendedMessages != c.appendedMessages || r.CacheControlMoved != c.moved || !slices.Equal(warningCodesOf(r.Warnings), c.warnings) {
				t.Fatalf("got %s %s %s %q settings %v ignored %v appended %d moved %v warnings %v", r.Format, r.Detection, r.Class, r.FirstChangedPath,
					r.ChangedSettings, r.IgnoredSettings, r.AppendedMessages, r.CacheControlMoved, warningCodesOf(r.Warnings))
			}
			// A changed setting leaves nothing reusable; otherwise the previous request's
			// prompt up to the change is, and the cache holds it in whole blocks.
			if (len(c.settings) > 0) != (r.ReusablePrefixBytes == 0) || r.CacheableReusableTokens != OpenAICacheableTokens(r.EstimatedReusablePrefixTokens) || r.Recommendation == "" {
				t.Fatalf("reusable %d bytes, %d cacheable tokens: %s", r.ReusablePrefixBytes, r.CacheableReusableTokens, r.Recommendation)
			}
			out, _ := json.Marshal(r)
			if strings.Contains(string(out), "You are Codex") || strings.Contains(string(out), "01a2340c") {
				t.Fatalf("the comparison quotes a request: %s", out)
			}
		})
	}
	// The next turn reuses exactly the previous request's prompt: tools and its input array.
	r, _ := Compare(codexPrev, codex)
	head, _, total := rawSizes(t, codexPrev, "input")
	if r.ReusablePrefixBytes != head+total {
		t.Fatalf("reusable %d bytes, want the previous prompt's %d", r.ReusablePrefixBytes, head+total)
	}
	if r.Current.CacheControl == nil || len(r.Current.CacheControl) != 0 {
		t.Fatalf("markers %v", r.Current.CacheControl)
	}
	r, _ = Compare(codex, replace(codex, `"text":"write a file"`, `"text":"write a file","prompt_cache_breakpoint":{"mode":"explicit"}`))
	if got := r.Current.CacheControl; len(got) != 1 || got[0].String() != "input[3].content[0]" {
		t.Fatalf("breakpoint reported at %v", got)
	}
}

func warningCodesOf(ws []Warning) []string {
	var codes []string
	for _, w := range ws {
		codes = append(codes, w.Code)
	}
	return codes
}

func TestCompareOpenAIShapes(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, c := range []struct {
		name      string
		prev, cur string
		opts      CompareOptions
		format    Format
		detection Detection
		class     Class
		path      string
	}{
		// A first Chat turn of plain text fits both messages APIs: it is read as its pair's.
		{"plain then tool", `{"model":"gpt-4.1","messages":[{"role":"user","content":"` + long + `"}]}`,
			`{"model":"gpt-4.1","messages":[{"role":"user","content":"` + long + `"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`,
			CompareOptions{}, FormatOpenAIChat, DetectedByShape, ClassAppendedMessages, ""},
		{"given", `{"model":"m","messages":[{"role":"user","content":"a"}]}`, `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`,
			CompareOptions{Format: FormatOpenAIChat}, FormatOpenAIChat, DetectionGiven, ClassAppendedMessages, ""},
		{"string input unchanged", `{"model":"gpt-5","input":"hi"}`, `{"model":"gpt-5","input":"hi"}`, CompareOptions{}, FormatResponses, DetectedByShape, ClassUnchanged, ""},
		{"string input to items", `{"model":"gpt-5","input":"hi"}`, `{"model":"gpt-5","input":[{"role":"user","content":"hi"}]}`, CompareOptions{}, FormatResponses, DetectedByShape, ClassDivergence, "input"},
		{"instructions", `{"model":"gpt-5","instructions":"a","input":[]}`, `{"model":"gpt-5","instructions":"b","input":[]}`, CompareOptions{}, FormatResponses, DetectedByShape, ClassDivergence, "instructions"},
		{"a tool output's parts grew", `{"model":"gpt-5","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]}]}`,
			`{"model":"gpt-5","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]}`, CompareOptions{}, FormatResponses, DetectedByShape, ClassAppendedBlocks, ""},
		{"stream and store do not count", `{"model":"gpt-5","stream":true,"store":true,"input":[]}`, `{"model":"gpt-5","stream":false,"input":[]}`,
			CompareOptions{}, FormatResponses, DetectedByShape, ClassUnchanged, ""},
	} {
		r, err := CompareWith([]byte(c.prev), []byte(c.cur), c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Format != c.format || r.Detection != c.detection || r.Class != c.class || r.FirstChangedPath != c.path {
			t.Errorf("%s: %s %s %s %q", c.name, r.Format, r.Detection, r.Class, r.FirstChangedPath)
		}
	}
}
