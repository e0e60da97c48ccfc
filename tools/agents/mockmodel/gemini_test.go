package mockmodel

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// geminiStreamPath is the path Gemini CLI 0.61.0 posts to.
const geminiStreamPath = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"

// parseGemini reads body as a request to path.
func parseGemini(t testing.TB, path string, body []byte) (Conversation, error) {
	t.Helper()
	r := httptest.NewRequest("POST", path, bytes.NewReader(body))
	r.SetPathValue("call", strings.TrimPrefix(r.URL.Path, "/v1beta/models/"))
	return gemini{}.parse(r, body)
}

// A request Gemini CLI 0.61.0 sent (recorded from a real session: a shell call, write_file, a
// failed replace, an MCP email, agent-rewind's checkpoint and list, read_file) reads into its
// tools, system prompt and every call paired with its result.
func TestGeminiRecordedRequest(t *testing.T) {
	body, err := os.ReadFile("testdata/gemini-cli-0.61.0-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseGemini(t, geminiStreamPath, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.API != "gemini" || c.Model != "gemini-2.5-flash" || !c.Stream {
		t.Errorf("API, model, stream = %q, %q, %v", c.API, c.Model, c.Stream)
	}
	for _, tool := range []string{"run_shell_command", "write_file", "mcp_shop_send_email", "mcp_agent-rewind_checkpoint", "mcp_agent-rewind_list"} {
		if !c.HasTool(tool) {
			t.Errorf("tool %s not offered; tools: %v", tool, c.Tools)
		}
	}
	if !strings.HasPrefix(c.System, "You are a non-interactive CLI agent") {
		t.Errorf("system prompt starts %.60q", c.System)
	}
	// Gemini CLI puts the MCP server instructions in the first user turn's session context.
	if !strings.Contains(c.Messages[0].Text, "instructions provided by the tool server 'agent-rewind'") {
		t.Errorf("first user turn has no server instructions: %.300q", c.Messages[0].Text)
	}
	if got := c.LastUserText(); !strings.Contains(got, "run things") {
		t.Errorf("last user text %q", got)
	}
	calls, results := c.Calls(), c.Results()
	if len(calls) != 7 || len(results) != 7 {
		t.Fatalf("%d calls, %d results; want 7 each", len(calls), len(results))
	}
	for i, call := range calls {
		if want := "call_mock_0" + string(rune('1'+i)); !strings.HasPrefix(call.ID, want) {
			t.Errorf("call %d id %q, want prefix %q", i, call.ID, want)
		}
		if results[i].CallID != call.ID {
			t.Errorf("result %d is for %q, call is %q", i, results[i].CallID, call.ID)
		}
	}
	if r := results[2]; !r.IsError || r.Text != "params must have required property 'instruction'" {
		t.Errorf("replace's result = %+v, want the error", r)
	}
	if r := results[4]; r.IsError || !strings.Contains(r.Text, "Keep this id") {
		t.Errorf("checkpoint's result = %+v", r)
	}
	if got := string(calls[3].Args); got != `{"to":"a@example.com","body":"hi"}` {
		t.Errorf("email args %s", got)
	}
}

// geminiEvents posts body to the server and returns the GenerateContentResponses it streamed.
func geminiEvents(t *testing.T, url string, body any) []geminiResponse {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+geminiStreamPath, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), msg)
	}
	var out []geminiResponse
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, MaxBody)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			if line != "" {
				t.Fatalf("stray line in the stream: %q", line)
			}
			continue
		}
		var r geminiResponse
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, r)
	}
	return out
}

func userText(s string) map[string]any {
	return map[string]any{"role": "user", "parts": []any{map[string]any{"text": s}}}
}

var geminiTools = []any{map[string]any{"functionDeclarations": []any{
	map[string]any{"name": "run_shell_command"}, map[string]any{"name": "write_file"},
}}}

// A Sequence played over Gemini's stream counts its calls whichever of the two places the
// client keeps the id in: the functionCall's id (the client's own id replacing it, the
// signature kept) or the signature (dropped, the id kept).
func TestGeminiSequenceOverSSE(t *testing.T) {
	s, err := Start(Sequence("done",
		Call(map[string]string{"command": "echo one"}, "run_shell_command"),
		Call(map[string]string{"file_path": "a.txt", "content": "x"}, "write_file"),
		Call(map[string]string{"command": "echo three"}, "run_shell_command"),
	))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	history := []any{userText("go")}
	first := geminiEvents(t, s.URL, map[string]any{"contents": history, "tools": geminiTools})
	if len(first) != 1 || len(first[0].Candidates) != 1 {
		t.Fatalf("first answer %+v", first)
	}
	cand := first[0].Candidates[0]
	part := cand.Content.Parts[0]
	if cand.FinishReason != "STOP" || cand.Content.Role != "model" || part.FunctionCall == nil || part.FunctionCall.Name != "run_shell_command" {
		t.Fatalf("first answer %+v", cand)
	}
	id1 := part.FunctionCall.ID
	if !strings.HasPrefix(id1, callPrefix+"01_") || signatureID(part.ThoughtSignature) != id1 {
		t.Fatalf("call id %q, signature %q", id1, part.ThoughtSignature)
	}
	if u := first[0].UsageMetadata; u.PromptTokenCount <= 0 || u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount {
		t.Errorf("usage %+v", u)
	}

	// The client replaces the id with its own and keeps the signature.
	history = append(history,
		map[string]any{"role": "model", "parts": []any{map[string]any{
			"functionCall":     map[string]any{"id": "run_shell_command_1796_0", "name": "run_shell_command", "args": map[string]string{"command": "echo one"}},
			"thoughtSignature": part.ThoughtSignature,
		}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{
			"functionResponse": map[string]any{"id": "run_shell_command_1796_0", "name": "run_shell_command", "response": map[string]string{"output": "one"}},
		}}})
	second := geminiEvents(t, s.URL, map[string]any{"contents": history, "tools": geminiTools})
	part2 := second[0].Candidates[0].Content.Parts[0]
	if part2.FunctionCall == nil || part2.FunctionCall.Name != "write_file" {
		t.Fatalf("second answer %+v, want step 2 (write_file)", second[0].Candidates[0])
	}

	// The client keeps the id and drops the signature; the response names the id.
	history = append(history,
		map[string]any{"role": "model", "parts": []any{map[string]any{
			"functionCall": map[string]any{"id": part2.FunctionCall.ID, "name": "write_file", "args": map[string]string{"file_path": "a.txt", "content": "x"}},
		}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{
			"functionResponse": map[string]any{"id": part2.FunctionCall.ID, "name": "write_file", "response": map[string]string{"error": "denied"}},
		}}})
	third := geminiEvents(t, s.URL, map[string]any{"contents": history, "tools": geminiTools})
	if fc := third[0].Candidates[0].Content.Parts[0].FunctionCall; fc == nil || !strings.HasPrefix(fc.ID, callPrefix+"03_") {
		t.Fatalf("third answer %+v, want step 3", third[0].Candidates[0])
	}

	log := s.Log()
	if len(log) != 3 {
		t.Fatalf("%d exchanges logged", len(log))
	}
	last := log[2].Conversation
	if r, ok := last.Result(id1); !ok || r.Text != "one" || r.IsError {
		t.Errorf("result of %s = %+v, %v", id1, r, ok)
	}
	if r, ok := last.Result(part2.FunctionCall.ID); !ok || r.Text != "denied" || !r.IsError {
		t.Errorf("result of write_file = %+v, %v", r, ok)
	}
}

// Responses that name no call id are paired in order with the calls of their name; calls with
// neither id nor signature get one from their position.
func TestGeminiPairsResultsInOrder(t *testing.T) {
	sig := base64.StdEncoding.EncodeToString([]byte(signaturePrefix + "call_mock_01_7"))
	body := `{"contents":[
	 {"role":"user","parts":[{"text":"go"}]},
	 {"role":"model","parts":[
	   {"thought":true,"text":"thinking"},
	   {"functionCall":{"name":"run_shell_command","args":{"command":"a"}},"thoughtSignature":"` + sig + `"},
	   {"functionCall":{"name":"run_shell_command","args":{"command":"b"}}},
	   {"functionCall":{"name":"read_file","args":{"file_path":"x"}}}]},
	 {"role":"user","parts":[
	   {"functionResponse":{"name":"read_file","response":{"output":"x"}}},
	   {"functionResponse":{"name":"run_shell_command","response":{"output":"A"}}},
	   {"functionResponse":{"name":"run_shell_command","response":{"content":[{"text":"B"}]}}}]}]}`
	c, err := parseGemini(t, geminiStreamPath, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Messages[1].Text; got != "" {
		t.Errorf("model text %q: thoughts are not what it said", got)
	}
	want := map[string]string{"call_mock_01_7": "A", "gemini_1_2": `{"content":[{"text":"B"}]}`, "gemini_1_3": "x"}
	calls := c.Calls()
	if len(calls) != 3 {
		t.Fatalf("calls %+v", calls)
	}
	for _, call := range calls {
		r, ok := c.Result(call.ID)
		if !ok || r.Text != want[call.ID] {
			t.Errorf("call %s (%s): result %+v, %v; want %q", call.ID, call.Args, r, ok, want[call.ID])
		}
	}
}

// generateContent answers one JSON response; a request without tools gets the Sequence's text.
func TestGeminiGenerateContentJSON(t *testing.T) {
	s, err := Start(Sequence("done"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL+"/v1beta/models/gemini-2.5-flash-lite:generateContent", "application/json",
		strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"title this"}]}],"systemInstruction":{"parts":[{"text":"be brief"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r geminiResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("decode: %v, type %q", err, resp.Header.Get("Content-Type"))
	}
	if len(r.Candidates) != 1 || r.Candidates[0].Content.Parts[0].Text != "ok" || r.ModelVersion != "gemini-2.5-flash-lite" {
		t.Errorf("answer %+v", r)
	}
	c := s.Log()[0].Conversation
	if c.Stream || c.System != "be brief" || c.LastUserText() != "title this" {
		t.Errorf("logged %+v", c)
	}
}

// What the mock cannot read is answered 400 with what was wrong, and logged.
func TestGeminiBadRequests(t *testing.T) {
	s, err := Start(Sequence("done"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct{ path, body, want string }{
		{"/v1beta/models/gemini-2.5-flash:countTokens", `{}`, `method "countTokens" is not served`},
		{"/v1beta/models/gemini-2.5-flash", `{}`, "names no model and method"},
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", `{}`, "alt=sse"},
		{"/v1beta/models/m:generateContent", `{"contents":[{"role":"tool","parts":[]}]}`, `role "tool"`},
		{"/v1beta/models/m:generateContent", `{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`, "functionCall has no name"},
		{"/v1beta/models/m:generateContent", `{"contents":[{"parts":[{"functionResponse":{"name":"x","response":[1]}}]}]}`, "not a JSON object"},
		{"/v1beta/models/m:generateContent", `{"contents":`, "not a GenerateContentRequest"},
	} {
		resp, err := http.Post(s.URL+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(msg), tc.want) {
			t.Errorf("%s %s: %d %q, want 400 naming %q", tc.path, tc.body, resp.StatusCode, msg, tc.want)
		}
	}
	for i, ex := range s.Log() {
		if ex.Err == "" {
			t.Errorf("exchange %d logged without its error", i)
		}
	}
}

// Whatever a client sends, the parser answers or errs, never panics, and every result it reads
// is for a call id or the id the client named.
func FuzzGeminiParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/gemini-cli-0.61.0-stream.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"a","id":"a__x"}}]},{"parts":[{"functionResponse":{"name":"a","id":"x","response":{"output":"o","error":"e"}}}]}]}`))
	f.Add([]byte(`{"contents":[{"parts":[{"functionResponse":{"name":"a","response":null}}]}],"tools":[{"googleSearch":{}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := parseGemini(t, geminiStreamPath, body)
		if err != nil {
			return
		}
		for _, call := range c.Calls() {
			if call.ID == "" || !json.Valid(call.Args) {
				t.Fatalf("call %+v", call)
			}
		}
	})
}
