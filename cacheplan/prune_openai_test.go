package cacheplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// The OpenAI fixtures are requests recorded from real clients (copied from
// tools/agents/mockmodel/testdata, so that this module's tests need nothing outside it):
// Codex CLI 0.169.0 on the Responses API, and Cline CLI 3.0.65 on Chat Completions.
const (
	codexRecording = "testdata/openai/codex-0.169.0-responses.json"
	clineRecording = "testdata/openai/cline-3.0.65-chat.json"
)

// spliceItems appends items to the array member name of a recorded body, keeping every byte
// the client sent: later turns of the same session, in the client's own item shapes.
func spliceItems(t testing.TB, body []byte, name string, items ...string) []byte {
	t.Helper()
	top, err := jsonscan.OpenObject(body, jsonscan.SkipSpace(body, 0), 0)
	if err != nil {
		t.Fatal(err)
	}
	for top.Next() {
		if !top.KeyIs(name) {
			continue
		}
		end, err := jsonscan.SkipValue(body, top.Value(), top.Depth())
		if err != nil {
			t.Fatal(err)
		}
		out := append([]byte{}, body[:end-1]...)
		for _, it := range items {
			out = append(out, ',')
			out = append(out, it...)
		}
		return append(out, body[end-1:]...)
	}
	t.Fatalf("no %s member", name)
	return nil
}

// listing is what an MCP tool answers alike to two identical calls: a checkpoint listing.
var listing = strings.Repeat(`{"id":"3f2a9c01b2de","label":"before the migration","kind":"manual","files":412}\n`, 8)

// codexTurns is the recorded Codex request after n more turns: each calls the agent-rewind
// MCP tool list (the same answer each time, under a new call id), runs a command (whose
// output carries a per-call chunk id, as Codex's exec_command does) and applies a patch.
func codexTurns(t testing.TB, n int) []byte {
	body := readFixture(t, codexRecording)
	patched := "Success. Updated the following files:\n"
	for f := range 12 {
		patched += fmt.Sprintf("M internal/store/file_%02d.go\n", f)
	}
	var items []string
	for k := range n {
		items = append(items,
			fmt.Sprintf(`{"type":"function_call","id":"fc_l%d","name":"mcp__agent_rewind__list","arguments":"{}","call_id":"call_list_%d"}`, k, k),
			fmt.Sprintf(`{"type":"function_call_output","call_id":"call_list_%d","output":%q}`, k, listing),
			fmt.Sprintf(`{"type":"function_call","id":"fc_t%d","name":"exec_command","arguments":"{\"cmd\":\"go test ./...\"}","call_id":"call_test_%d"}`, k, k),
			fmt.Sprintf(`{"type":"function_call_output","call_id":"call_test_%d","output":%q}`, k,
				fmt.Sprintf("Chunk ID: %06x\nWall time: 1.2 seconds\nProcess exited with code 0\nOutput:\n%s", 0x20499e+k, strings.Repeat("ok  \texample.com/pkg\t0.01s\n", 12))),
			fmt.Sprintf(`{"type":"custom_tool_call","id":"ctc_%d","call_id":"call_patch_%d","name":"apply_patch","input":"*** Begin Patch\n*** Update File: a.txt\n@@\n-hi\n+hello\n*** End Patch\n"}`, k, k),
			fmt.Sprintf(`{"type":"custom_tool_call_output","call_id":"call_patch_%d","output":%q}`, k, patched),
		)
	}
	return spliceItems(t, body, "input", items...)
}

// clineTurns is the recorded Cline request after n more turns, each reading the same file
// (the same answer under a new call id).
func clineTurns(t testing.TB, n int) []byte {
	body := readFixture(t, clineRecording)
	result, _ := json.Marshal([]map[string]any{{"query": "/tmp/proj/main.go", "result": strings.Repeat("package main\n\nfunc main() { println(\"hi\") }\n", 10), "success": true}})
	var items []string
	for k := range n {
		items = append(items,
			fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_read_%d","type":"function","function":{"name":"read_files","arguments":"{\"files\":[{\"path\":\"/tmp/proj/main.go\"}]}"}}]}`, k),
			fmt.Sprintf(`{"role":"tool","tool_call_id":"call_read_%d","content":%q}`, k, result),
		)
	}
	return spliceItems(t, body, "messages", items...)
}

func references(res *PruneResult) []string {
	var got []string
	for _, r := range res.References {
		got = append(got, r.Location.String()+"->"+r.First.String())
	}
	return got
}

func TestPruneRecordedBodiesAsSent(t *testing.T) {
	for _, c := range []struct {
		file   string
		format Format
	}{{codexRecording, FormatResponses}, {clineRecording, FormatOpenAIChat}} {
		body := readFixture(t, c.file)
		out, res, err := Prune(body, PruneOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// One tool output each (Codex's tool_search_output is not a tool's answer), nothing
		// repeated: the body comes back as it is.
		if res.Format != c.format || res.Detection != DetectedByShape || res.ToolResults != 1 || res.Pruned != 0 || &out[0] != &body[0] {
			t.Errorf("%s: %+v", c.file, res)
		}
	}
}

func TestPruneResponses(t *testing.T) {
	body := codexTurns(t, 3)
	out, res, err := Prune(body, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The recorded body has 8 input items; each turn adds 6. The listings and the patch
	// results repeat; the command outputs differ in their chunk ids, so they are kept.
	want := []string{"input[15].output->input[9].output", "input[19].output->input[13].output", "input[21].output->input[9].output", "input[25].output->input[13].output"}
	if got := references(res); !slices.Equal(got, want) || res.Format != FormatResponses || res.ToolResults != 10 {
		t.Fatalf("references %v (%d outputs, %s), want %v", got, res.ToolResults, res.Format, want)
	}
	if !bytes.Contains(out, []byte(referencePrefix+`input[9].output (call_id call_list_0); its content is omitted`)) ||
		!bytes.Contains(out, []byte(referencePrefix+`input[13].output (call_id call_patch_0)`)) {
		t.Fatalf("reference text missing")
	}
	checkPruned(t, body, out, res)
	// Every call keeps its call id: the pruned body pairs each call with an output.
	var req struct {
		Input []struct {
			CallID string `json:"call_id"`
		}
	}
	if err := json.Unmarshal(out, &req); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range req.Input {
		ids = append(ids, it.CallID)
	}
	for k := range 3 {
		for _, id := range []string{"call_list_%d", "call_test_%d", "call_patch_%d"} {
			if n := slices.Index(ids, fmt.Sprintf(id, k)); n < 0 || !slices.Contains(ids[n+1:], fmt.Sprintf(id, k)) {
				t.Fatalf("%s lost its call or its output", fmt.Sprintf(id, k))
			}
		}
	}
}

func TestPruneChat(t *testing.T) {
	body := clineTurns(t, 3)
	out, res, err := Prune(body, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"messages[7].content->messages[5].content", "messages[9].content->messages[5].content"}
	if got := references(res); !slices.Equal(got, want) || res.Format != FormatOpenAIChat || res.Detection != DetectedByShape || res.ToolResults != 4 {
		t.Fatalf("references %v (%+v), want %v", got, res, want)
	}
	if !bytes.Contains(out, []byte(referencePrefix+`messages[5].content (tool_call_id call_read_0)`)) {
		t.Fatalf("reference text missing")
	}
	checkPruned(t, body, out, res)
}

// Content given as parts (both APIs document arrays of text parts for a tool's output) is
// compared as written; parts carrying OpenAI's cache marker are never replaced.
func TestPrunePartsAndMarkers(t *testing.T) {
	parts := `[{"type":"input_text","text":"` + strings.Repeat("line of output\\n", 30) + `"}]`
	marked := `[{"type":"input_text","text":"` + strings.Repeat("line of output\\n", 30) + `","prompt_cache_breakpoint":{"mode":"explicit"}}]`
	body := []byte(`{"model":"gpt-5.6","input":[` +
		`{"type":"function_call_output","call_id":"c1","output":` + parts + `},` +
		`{"type":"function_call_output","call_id":"c2","output":` + parts + `},` +
		`{"type":"function_call_output","call_id":"c3","output":` + marked + `},` +
		`{"type":"function_call_output","call_id":"c4","output":` + marked + `},` +
		`{"type":"function_call_output","call_id":"c5","output":"x","output":` + parts + `}]}`)
	out, res, err := Prune(body, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := references(res); !slices.Equal(got, []string{"input[1].output->input[0].output"}) || res.ToolResults != 5 {
		t.Fatalf("references %v (%d outputs)", got, res.ToolResults)
	}
	checkPruned(t, body, out, res)

	chatParts := `[{"type":"text","text":"` + strings.Repeat("line of output\\n", 30) + `"}]`
	chatMarked := `[{"type":"text","text":"` + strings.Repeat("line of output\\n", 30) + `","prompt_cache_breakpoint":{"mode":"explicit"}}]`
	chat := []byte(`{"model":"gpt-5.6","messages":[{"role":"user","content":"go"},` +
		`{"role":"tool","tool_call_id":"c1","content":` + chatParts + `},{"role":"tool","tool_call_id":"c2","content":` + chatParts + `},` +
		`{"role":"tool","tool_call_id":"c3","content":` + chatMarked + `},{"role":"tool","tool_call_id":"c4","content":` + chatMarked + `}]}`)
	out, res, err = Prune(chat, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := references(res); !slices.Equal(got, []string{"messages[2].content->messages[1].content"}) || res.Format != FormatOpenAIChat {
		t.Fatalf("chat references %v (%+v)", got, res)
	}
	checkPruned(t, chat, out, res)
}

func TestPruneFormatDetection(t *testing.T) {
	anthropic := readFixture(t, "testdata/prune/repeated.json")
	plain := []byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`)
	mixed := []byte(`{"model":"m","system":"s","messages":[{"role":"tool","tool_call_id":"c","content":"r"}]}`)
	for _, c := range []struct {
		name      string
		body      []byte
		given     Format
		format    Format
		detection Detection
		outputs   int
	}{
		{"anthropic by shape", anthropic, "", FormatMessages, DetectedByShape, 8},
		{"plain text turns are assumed Anthropic", plain, "", FormatMessages, DetectionAssumed, 0},
		{"plain text turns given as Chat", plain, FormatOpenAIChat, FormatOpenAIChat, DetectionGiven, 0},
		{"Chat given as Anthropic has no tool_result", readFixture(t, clineRecording), FormatMessages, FormatMessages, DetectionGiven, 0},
		{"Anthropic given as Chat has no tool message", anthropic, FormatOpenAIChat, FormatOpenAIChat, DetectionGiven, 0},
		{"mixed shapes are neither", mixed, "", FormatOther, "", 0},
		{"mixed shapes given as Chat", mixed, FormatOpenAIChat, FormatOpenAIChat, DetectionGiven, 1},
		{"a messages body given as Responses", anthropic, FormatResponses, FormatOther, "", 0},
		{"a Responses body given as Chat", readFixture(t, codexRecording), FormatOpenAIChat, FormatOther, "", 0},
		{"not an object", []byte(`[1]`), "", FormatOther, "", 0},
		{"Gemini", []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`), "", FormatOther, "", 0},
	} {
		out, res, err := Prune(c.body, PruneOptions{Format: c.given, MinBytes: 1 << 20})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Format != c.format || res.Detection != c.detection || res.ToolResults != c.outputs || &out[0] != &c.body[0] {
			t.Errorf("%s: %+v", c.name, res)
		}
		if (res.Format == FormatOther) != strings.Contains(res.Reason, "supported: an Anthropic Messages body") {
			t.Errorf("%s: reason %q", c.name, res.Reason)
		}
	}
}

// An agent loop's pruned requests stay prefix-stable on both OpenAI APIs, as on Anthropic's.
func TestPruneOpenAIIsPrefixStable(t *testing.T) {
	for _, c := range []struct {
		member string
		turns  func(testing.TB, int) []byte
	}{{"Input", codexTurns}, {"Messages", clineTurns}} {
		var prev []any
		for n := 1; n <= 5; n++ {
			out, _, err := Prune(c.turns(t, n), PruneOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var req map[string]any
			if err := json.Unmarshal(out, &req); err != nil {
				t.Fatal(err)
			}
			items := req[strings.ToLower(c.member)].([]any)
			if prev != nil && !reflect.DeepEqual(items[:len(prev)], prev) {
				t.Fatalf("%s turn %d: the pruned history differs from the previous request's", c.member, n)
			}
			prev = items
		}
	}
}
