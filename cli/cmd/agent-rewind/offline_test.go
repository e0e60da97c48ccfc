package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recording is the absolute path of a request recorded from a real client: Codex CLI
// 0.169.0 on the Responses API, Cline CLI 3.0.65 on Chat Completions.
func recording(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "tools", "agents", "mockmodel", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// promptMarker is planted in every prompt, tool result and response below: the offline
// commands' reports and errors must never contain it.
const promptMarker = "PROMPT-MARKER-e2e-5d21"

func noPromptText(t *testing.T, r result, what string) {
	t.Helper()
	if strings.Contains(r.stdout, promptMarker) || strings.Contains(r.stderr, promptMarker) {
		t.Fatalf("%s printed prompt text:\nstdout %s\nstderr %s", what, r.stdout, r.stderr)
	}
}

// noWorkspace fails if a command created a store for the folder where it ran, or anything in it.
func noWorkspace(t *testing.T, dir string) {
	t.Helper()
	if hasStore(t, dir) {
		t.Fatalf("a store was created for %s", dir)
	}
}

// agentRequest is an Anthropic Messages body after n agent turns.
func agentRequest(n int) map[string]any {
	msgs := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Fix the build. " + promptMarker}}}}
	for i := range n {
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", i), "name": "bash", "input": map[string]any{"cmd": "make"}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprintf("toolu_%d", i), "content": strings.Repeat("build log line "+promptMarker+"\n", 20)}}},
		)
	}
	return map[string]any{
		"model":      "claude-sonnet-4-5",
		"max_tokens": 1024,
		"system":     "You are a build agent. " + promptMarker,
		"tools":      []any{map[string]any{"name": "bash", "description": "Run a command.", "input_schema": map[string]any{"type": "object"}}},
		"messages":   msgs,
	}
}

func writeJSON(t *testing.T, path string, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCacheReport(t *testing.T) {
	dir := t.TempDir()
	req := agentRequest(2)
	req["system"] = strings.Repeat("You are a build agent: keep every build green. ", 100) + promptMarker // over Sonnet 4.5's 1024-token minimum
	body := writeJSON(t, filepath.Join(dir, "req.json"), req)

	for _, args := range [][]string{
		{"cache-report", string(body)},
		{"cache-report", "@req.json"},
		{"cache-report", "-"},
	} {
		r := run(t, dir, string(body), args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "cache-report: insert (anthropic-messages)") || !strings.Contains(r.stdout, "breakpoint: messages[4].content[0] (tail, ttl 5m)") {
			t.Fatalf("%v: code %d\n%s%s", args[1][:1], r.code, r.stdout, r.stderr)
		}
		noPromptText(t, r, "cache-report")
	}

	r := run(t, dir, "", "--json", "cache-report", "--ttl", "1h", "@req.json")
	var plan struct {
		Decision    string
		Breakpoints []struct{ Location, Role, TTL string }
		Existing    []any
		Warnings    []any
		PrefixBytes int
	}
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil || r.code != 0 {
		t.Fatalf("--json: %v %q", err, r.stdout)
	}
	if plan.Decision != "insert" || len(plan.Breakpoints) != 1 || plan.Breakpoints[0].Location != "messages[4].content[0]" || plan.Breakpoints[0].TTL != "1h" || plan.Existing == nil || plan.PrefixBytes <= 0 {
		t.Fatalf("--json plan %+v", plan)
	}
	noPromptText(t, r, "cache-report --json")

	// A prompt too short for the model to cache gets no marker, and the report says why.
	short := writeJSON(t, filepath.Join(dir, "short.json"), agentRequest(2))
	r = run(t, dir, "", "cache-report", "@short.json")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "cache-report: below-minimum (anthropic-messages)") || strings.Contains(r.stdout, "breakpoint:") ||
		!strings.Contains(r.stdout, "cannot reach the 1024-token minimum for claude-sonnet-4-5") || !strings.Contains(r.stdout, "model minimum: 1024 tokens") {
		t.Fatalf("short prompt (%d bytes): %d\n%s%s", len(short), r.code, r.stdout, r.stderr)
	}
	noPromptText(t, r, "cache-report below-minimum")

	// A body with its own marker is left alone; another format is reported, not refused.
	r = run(t, dir, "", "cache-report", `{"model":"m","cache_control":{"type":"ephemeral"},"messages":[{"role":"user","content":"hi `+promptMarker+`"}]}`)
	if r.code != 0 || !strings.Contains(r.stdout, "client-supplied") || !strings.Contains(r.stdout, "client marker: cache_control") {
		t.Fatalf("client-supplied: %d %s", r.code, r.stdout)
	}
	r = run(t, dir, "", "cache-report", `{"model":"gpt-5","input":"`+promptMarker+`"}`)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "cache-report: below-minimum (openai-responses)\n  read as: openai-responses (detected from its shape)") {
		t.Fatalf("responses: %d %s", r.code, r.stdout)
	}
	noPromptText(t, r, "cache-report")

	// The requests Codex CLI and Cline CLI really sent, as docs/offline-tools.md shows them.
	for _, c := range []struct{ file, name, want string }{
		{"codex-0.169.0-responses.json", "codex-request.json", "stable since the previous turn: everything before input[6]"},
		{"cline-3.0.65-chat.json", "cline-request.json", "stable since the previous turn: everything before messages[2]"},
	} {
		b, err := os.ReadFile(recording(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, c.name), b, 0o644)
		r = run(t, dir, "", "cache-report", "@"+c.name)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "cache-report: automatic (") || !strings.Contains(r.stdout, c.want) || !strings.Contains(r.stdout, "whole 128-token blocks, from 1024") {
			t.Fatalf("%s: %d\n%s%s", c.file, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "01a2340c-ec96") { // Codex's prompt_cache_key
			t.Fatalf("%s: the report shows the cache key", c.file)
		}
	}
	r = run(t, dir, "", "--json", "cache-report", "--api", "openai-chat", "@cline-request.json")
	var oa struct {
		Decision, Format, FormatDetection string
		PrefixCaching                     struct {
			MinimumTokens, IncrementTokens, CacheableTokens int
			PromptCacheKey                                  bool
			PreviousTurn                                    struct{ NewFrom string }
		}
		Warnings []struct{ Code string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &oa); err != nil || oa.Decision != "automatic" || oa.Format != "openai-chat" || oa.FormatDetection != "given" ||
		oa.PrefixCaching.MinimumTokens != 1024 || oa.PrefixCaching.IncrementTokens != 128 || oa.PrefixCaching.CacheableTokens%128 != 0 || oa.PrefixCaching.PreviousTurn.NewFrom != "messages[2]" ||
		len(oa.Warnings) != 1 || oa.Warnings[0].Code != "no-prompt-cache-key" {
		t.Fatalf("--json chat: %v %s", err, r.stdout)
	}
	for _, args := range [][]string{
		{"cache-report", `{"contents":[{"parts":[{"text":"` + promptMarker + `"}]}]}`},
		{"cache-report", "--api", "openai-responses", "@cline-request.json"},
	} {
		r = run(t, dir, "", args...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "supported: an Anthropic Messages body") {
			t.Fatalf("%v: %d %q", args, r.code, r.stderr)
		}
		noPromptText(t, r, "cache-report refusal")
	}

	// Invalid input exits 1 with an actionable error, without quoting it.
	r = run(t, dir, "", "cache-report", `{"messages":[{"content":"`+promptMarker)
	if r.code != 1 || !strings.Contains(r.stderr, "not valid JSON") {
		t.Fatalf("invalid: %d %s", r.code, r.stderr)
	}
	noPromptText(t, r, "cache-report error")
	r = run(t, dir, "", "--json", "cache-report", "@missing.json")
	var e struct {
		Error    string
		ExitCode int
	}
	if json.Unmarshal([]byte(r.stdout), &e) != nil || r.code != 1 || e.ExitCode != 1 || !strings.Contains(e.Error, "cannot open @missing.json") {
		t.Fatalf("missing file: %d %q", r.code, r.stdout)
	}
	noWorkspace(t, dir)
}

func TestPrune(t *testing.T) {
	dir := t.TempDir()
	req := agentRequest(3) // three identical build logs: two are repeats
	body := writeJSON(t, filepath.Join(dir, "req.json"), req)

	r := run(t, dir, "", "prune", "@req.json")
	if r.code != 0 || !strings.Contains(r.stderr, "prune: read as anthropic-messages (detected from its shape); 2 of 3 tool results were repeats") {
		t.Fatalf("prune: %d %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, promptMarker) {
		t.Fatalf("the summary quotes a prompt: %s", r.stderr)
	}
	if !json.Valid([]byte(r.stdout)) || len(r.stdout) >= len(body) {
		t.Fatalf("pruned body: %d bytes from %d", len(r.stdout), len(body))
	}
	// The repeated logs are gone, the first one and every prompt stay.
	if n := strings.Count(r.stdout, "build log line "+promptMarker); n != 20 {
		t.Fatalf("%d log lines left, want the first result's 20", n)
	}
	if !strings.Contains(r.stdout, "identical to the earlier tool result at messages[2].content[0] (tool_use_id toolu_0)") {
		t.Fatalf("no reference in the pruned body")
	}

	// --json: the summary, then the same pruned body byte for byte.
	j := run(t, dir, string(body), "--json", "prune", "-")
	var out struct {
		Summary struct {
			Format     string
			Pruned     int
			BytesSaved int
			References []struct{ Location, First string }
		}
		Body json.RawMessage
	}
	if err := json.Unmarshal([]byte(j.stdout), &out); err != nil || j.code != 0 {
		t.Fatalf("--json: %v %q", err, j.stdout)
	}
	if out.Summary.Pruned != 2 || out.Summary.BytesSaved != len(body)-len(r.stdout) || string(out.Body) != r.stdout || out.Summary.References[1].Location != "messages[6].content[0]" {
		t.Fatalf("--json summary %+v", out.Summary)
	}
	summary, _ := json.Marshal(out.Summary)
	if bytes.Contains(summary, []byte(promptMarker)) {
		t.Fatalf("the JSON summary quotes a prompt")
	}

	// OpenAI bodies: the Responses request Codex CLI 0.169.0 really sent (one tool output,
	// nothing to prune), and a Chat Completions body whose second tool message repeats the
	// first; a plain-text body is read as Anthropic unless --api says otherwise.
	// As docs/offline-tools.md shows it.
	codex, err := os.ReadFile(recording(t, "codex-0.169.0-responses.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "codex-request.json"), codex, 0o644)
	r = run(t, dir, "", "prune", "@codex-request.json")
	if r.code != 0 || r.stdout != string(codex) || !strings.Contains(r.stderr, "prune: read as openai-responses (detected from its shape); 0 of 1 tool results") {
		t.Fatalf("codex: %d %q", r.code, r.stderr)
	}
	log := strings.Repeat("ok  example.com/pkg 0.01s "+promptMarker+"\n", 12)
	chat, _ := json.Marshal(map[string]any{"model": "gpt-4.1", "messages": []any{
		map[string]any{"role": "user", "content": "test it " + promptMarker},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": log},
		map[string]any{"role": "tool", "tool_call_id": "call_2", "content": log},
	}})
	r = run(t, dir, string(chat), "prune", "--api", "openai-chat", "-")
	if r.code != 0 || strings.Count(r.stdout, promptMarker) != 13 || !strings.Contains(r.stdout, "identical to the earlier tool result at messages[1].content (tool_call_id call_1)") ||
		!strings.Contains(r.stderr, "prune: read as openai-chat (as --api says); 1 of 2 tool results") {
		t.Fatalf("chat: %d %q", r.code, r.stderr)
	}
	if r = run(t, dir, string(chat), "prune", "-"); !strings.Contains(r.stderr, "prune: read as openai-chat (detected from its shape); 1 of 2 tool results") {
		t.Fatalf("chat detected: %d %q", r.code, r.stderr)
	}
	noPromptText(t, result{stderr: r.stderr}, "prune summary")
	plain := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if r = run(t, dir, "", "prune", plain); r.code != 0 || !strings.Contains(r.stderr, "read as anthropic-messages (assumed: ") {
		t.Fatalf("plain: %d %q", r.code, r.stderr)
	}
	if r = run(t, dir, "", "--json", "prune", "--api", "openai-chat", plain); r.code != 0 || !strings.Contains(r.stdout, `"format": "openai-chat"`) || !strings.Contains(r.stdout, `"formatDetection": "given"`) {
		t.Fatalf("plain --api openai-chat: %d %q", r.code, r.stdout)
	}
	// A body of another API is refused, naming the shapes that are read.
	gemini := `{"contents":[{"role":"user","parts":[{"text":"hi ` + promptMarker + `"}]}]}`
	for _, args := range [][]string{{"prune", gemini}, {"prune", "--api", "openai-responses", plain}} {
		r = run(t, dir, "", args...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "supported: an Anthropic Messages body") || !strings.Contains(r.stderr, "give --api") {
			t.Fatalf("%v: %d %q %q", args, r.code, r.stdout, r.stderr)
		}
		noPromptText(t, r, "prune refusal")
	}
	r = run(t, dir, "", "prune", `{"messages":`)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "not valid JSON") {
		t.Fatalf("invalid: %d %q %q", r.code, r.stdout, r.stderr)
	}
	noWorkspace(t, dir)
}

func TestCacheCompare(t *testing.T) {
	dir := t.TempDir()
	prev := agentRequest(2)
	writeJSON(t, filepath.Join(dir, "prev.json"), prev)
	writeJSON(t, filepath.Join(dir, "next.json"), agentRequest(3))
	edited := agentRequest(3)
	edited["messages"].([]any)[2].(map[string]any)["content"].([]any)[0].(map[string]any)["content"] = "rewritten " + promptMarker
	writeJSON(t, filepath.Join(dir, "edited.json"), edited)
	model := agentRequest(3)
	model["model"] = "claude-opus-4-6"
	writeJSON(t, filepath.Join(dir, "model.json"), model)

	cases := []struct {
		cur, class, path string
	}{
		{"prev.json", "unchanged", ""},
		{"next.json", "appended-messages", ""},
		{"edited.json", "divergence", "messages[2].content[0]"},
		{"model.json", "divergence", "model"},
	}
	for _, c := range cases {
		r := run(t, dir, "", "cache-compare", "prev.json", c.cur)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "cache-compare: "+c.class+"\n") || (c.path != "" && !strings.Contains(r.stdout, "first changed: "+c.path)) {
			t.Fatalf("%s: %d\n%s%s", c.cur, r.code, r.stdout, r.stderr)
		}
		noPromptText(t, r, "cache-compare")
		r = run(t, dir, "", "--json", "cache-compare", "prev.json", c.cur)
		var cmp struct {
			Classification   string
			FirstChangedPath string
			Recommendation   string
			Note             string
		}
		if err := json.Unmarshal([]byte(r.stdout), &cmp); err != nil || cmp.Classification != c.class || cmp.FirstChangedPath != c.path || cmp.Recommendation == "" || cmp.Note == "" {
			t.Fatalf("%s --json: %v %s", c.cur, err, r.stdout)
		}
		noPromptText(t, r, "cache-compare --json")
	}

	// OpenAI: Codex's recorded request against the one before it (its input up to the tool
	// search's output, another turn id), as docs/offline-tools.md shows it.
	codex, err := os.ReadFile(recording(t, "codex-0.169.0-responses.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "codex-request.json"), codex, 0o644)
	var earlier map[string]any
	json.Unmarshal(codex, &earlier)
	earlier["input"] = earlier["input"].([]any)[:6]
	earlier["client_metadata"].(map[string]any)["turn_id"] = "01a2340c-ed00-7000-8000-000000000001"
	writeJSON(t, filepath.Join(dir, "codex-previous.json"), earlier)
	r := run(t, dir, "", "cache-compare", "codex-previous.json", "codex-request.json")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "cache-compare: appended-messages\n  read as: openai-responses (detected from its shape)\n") ||
		!strings.Contains(r.stdout, "changed, not part of the prompt: client_metadata") || !strings.Contains(r.stdout, "appended: 2 input items") ||
		!strings.Contains(r.stdout, "OpenAI's cache holds about ") {
		t.Fatalf("codex: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	earlier["prompt_cache_key"] = "another-session"
	writeJSON(t, filepath.Join(dir, "codex-rekeyed.json"), earlier)
	r = run(t, dir, "", "--json", "cache-compare", "--api", "openai-responses", "codex-rekeyed.json", "codex-request.json")
	var oa struct {
		Classification, FirstChangedPath, Format, FormatDetection string
		ReusablePrefixBytes                                       int
		IgnoredSettings                                           []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &oa); err != nil || oa.Classification != "divergence" || oa.FirstChangedPath != "prompt_cache_key" ||
		oa.Format != "openai-responses" || oa.FormatDetection != "given" || oa.ReusablePrefixBytes != 0 || len(oa.IgnoredSettings) != 1 {
		t.Fatalf("--json rekeyed: %v %s", err, r.stdout)
	}
	if strings.Contains(r.stdout, "another-session") || strings.Contains(r.stdout, "01a2340c") {
		t.Fatalf("the comparison shows a cache key: %s", r.stdout)
	}

	// Refusals: each exits 1 with a reason, quoting nothing.
	writeJSON(t, filepath.Join(dir, "gemini.json"), map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": promptMarker}}}}})
	os.WriteFile(filepath.Join(dir, "latin1.json"), []byte("{\"messages\":[],\"x\":\"\xe9 "+promptMarker+"\"}"), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"messages":[{"content":"`+promptMarker), 0o644)
	exact := `{"messages":[],"pad":"` + strings.Repeat("p", 2<<20-len(`{"messages":[],"pad":""}`)) + `"}`
	os.WriteFile(filepath.Join(dir, "exact.json"), []byte(exact), 0o644)
	os.WriteFile(filepath.Join(dir, "over.json"), []byte(exact+" "), 0o644)
	os.Mkdir(filepath.Join(dir, "adir"), 0o755)
	for _, c := range []struct{ file, want string }{
		{"codex-request.json", "the previous request is anthropic-messages and the current one openai-responses"},
		{"gemini.json", "supported: an Anthropic Messages body"},
		{"latin1.json", "not valid UTF-8"},
		{"broken.json", "not valid JSON"},
		{"over.json", "over the 2097152-byte (2 MiB) limit"},
		{"adir", "not a regular file"},
		{"missing.json", "no such file"},
	} {
		r := run(t, dir, "", "cache-compare", "prev.json", c.file)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Fatalf("%s: %d %q", c.file, r.code, r.stderr)
		}
		noPromptText(t, r, "cache-compare error")
	}
	if r := run(t, dir, "", "cache-compare", "exact.json", "exact.json"); r.code != 0 || !strings.Contains(r.stdout, "unchanged") {
		t.Fatalf("exactly 2 MiB: %d %s", r.code, r.stderr)
	}
	noWorkspace(t, dir)
}

func captureRecord(scope, text string) string {
	b, _ := json.Marshal(map[string]any{
		"method": "POST", "origin": "https://api.anthropic.com", "path": "/v1/messages",
		"headers": map[string]any{"anthropic-version": "2023-06-01"},
		"body":    map[string]any{"model": "claude-sonnet-4-5", "messages": []any{map[string]any{"role": "user", "content": text + " " + promptMarker}}},
		"usage":   map[string]any{"input_tokens": 1000, "output_tokens": 50},
		"scope":   scope,
	})
	return string(b)
}

func TestAnalyze(t *testing.T) {
	dir := t.TempDir()
	lines := []string{captureRecord("team-a", "one"), captureRecord("team-a", "one"), captureRecord("team-b", "two"), captureRecord("team-a", "one")}
	ndjson := strings.Join(lines, "\n") + "\n"
	os.WriteFile(filepath.Join(dir, "capture.ndjson"), []byte(ndjson), 0o644)
	array := "[" + strings.Join(lines, ",") + "]"

	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"analyze", "--file", "capture.ndjson", "--ndjson"}},
		{ndjson, []string{"analyze", "--stdin"}},
		{array, []string{"analyze", "--stdin"}},
		{"", []string{"analyze", array}},
	} {
		r := run(t, dir, c.stdin, c.args...)
		if r.code != 0 || !strings.Contains(r.stdout, "exact-repeat opportunities: 2") || !strings.Contains(r.stdout, "tokens in those repeats: 2100") || !strings.Contains(r.stdout, "not realised savings") {
			t.Fatalf("%v: %d\n%s%s", c.args, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "team-a") {
			t.Fatalf("the attested report names a scope")
		}
		noPromptText(t, r, "analyze")
	}

	r := run(t, dir, "", "--json", "analyze", "--file", "capture.ndjson")
	var rep struct {
		Attested                 bool
		Records                  int
		ExactRepeatOpportunities int
		Source                   struct{ Bytes int }
		Legacy                   any
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || !rep.Attested || rep.Records != 4 || rep.ExactRepeatOpportunities != 2 || rep.Source.Bytes != len(ndjson) || rep.Legacy != nil {
		t.Fatalf("--json: %v %s", err, r.stdout)
	}
	noPromptText(t, r, "analyze --json")

	r = run(t, dir, "", "analyze", "--file", "capture.ndjson", "--legacy-json")
	var legacy struct {
		Attested bool
		Legacy   struct {
			ReviewBeforeSharing bool
			Scopes              []struct{ Scope string }
			Sample              struct{ Repeats int }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &legacy); err != nil || legacy.Attested || !legacy.Legacy.ReviewBeforeSharing || len(legacy.Legacy.Scopes) != 2 || legacy.Legacy.Sample.Repeats != 2 || !strings.Contains(r.stderr, "review it before sharing") {
		t.Fatalf("--legacy-json: %v %s %s", err, r.stdout, r.stderr)
	}
	noPromptText(t, r, "analyze --legacy-json")

	// Errors name no path and quote nothing; limits give the byte count and a digest.
	over := `{"method":"POST","origin":"o","path":"/","pad":"` + strings.Repeat(promptMarker, (2<<20)/len(promptMarker)) + `"}`
	os.WriteFile(filepath.Join(dir, "secret-name.ndjson"), []byte(lines[0]+"\n"+over+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad-tokens.ndjson"), []byte(strings.Replace(lines[0], `"input_tokens":1000`, `"input_tokens":-5`, 1)), 0o644)
	for _, c := range []struct{ file, want string }{
		{"secret-name.ndjson", "record bytes is "},
		{"bad-tokens.ndjson", "invalid token count"},
		{"no-such-secret-name.ndjson", "cannot open the --file capture: no such file"},
	} {
		r := run(t, dir, "", "analyze", "--file", c.file, "--ndjson")
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "secret-name") {
			t.Fatalf("%s: %d %q", c.file, r.code, r.stderr)
		}
		noPromptText(t, r, "analyze error")
	}
	if r := run(t, dir, "", "analyze", "--file", "secret-name.ndjson"); !strings.Contains(r.stderr, "sha256 ") {
		t.Fatalf("a limit error without a digest: %q", r.stderr)
	}

	// OpenAI traffic: the requests Codex CLI and Cline CLI really sent, each twice, with the
	// usage OpenAI documents; a Codex turn continuing a stored response never counts.
	codex, err := os.ReadFile(recording(t, "codex-0.169.0-responses.json"))
	if err != nil {
		t.Fatal(err)
	}
	cline, err := os.ReadFile(recording(t, "cline-3.0.65-chat.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	json.Unmarshal(codex, &stored)
	stored["previous_response_id"] = "resp_" + promptMarker
	storedBody, _ := json.Marshal(stored)
	record := func(path string, body []byte, usage string) string {
		return `{"method":"POST","origin":"https://api.openai.com","path":"` + path + `","headers":{"content-type":"application/json","openai-project":"proj_1"},"body":` + string(body) + `,"usage":` + usage + `,"status":200}`
	}
	responsesUsage := `{"input_tokens":10615,"input_tokens_details":{"cached_tokens":10496},"output_tokens":120,"output_tokens_details":{"reasoning_tokens":64},"total_tokens":10735}`
	chatUsage := `{"prompt_tokens":5483,"completion_tokens":40,"total_tokens":5523,"prompt_tokens_details":{"cached_tokens":5376}}`
	openai := strings.Join([]string{
		record("/v1/responses", codex, responsesUsage), record("/v1/responses", codex, responsesUsage),
		record("/v1/chat/completions", cline, chatUsage), record("/v1/chat/completions", cline, chatUsage),
		record("/v1/responses", storedBody, responsesUsage), record("/v1/responses", storedBody, responsesUsage),
	}, "\n") + "\n"
	os.WriteFile(filepath.Join(dir, "openai-capture.ndjson"), []byte(openai), 0o644)
	r = run(t, dir, "", "analyze", "--file", "openai-capture.ndjson")
	for _, want := range []string{"eligible (replay candidates): 4", "provider state 2", "exact-repeat opportunities: 2",
		"openai-responses: 2 eligible, 1 exact-repeat opportunities, tokens 10735 (input 119, output 120, cache write 0, cache read 10496, of the output 64 reasoning)",
		"openai-chat: 2 eligible, 1 exact-repeat opportunities, tokens 5523 (input 107, output 40, cache write 0, cache read 5376)"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("openai capture: want %q\n%d %s%s", want, r.code, r.stdout, r.stderr)
		}
	}
	noPromptText(t, r, "analyze openai")
	r = run(t, dir, "", "--json", "analyze", "--file", "openai-capture.ndjson")
	var oa struct {
		Ineligible struct{ ProviderState int }
		APIs       map[string]struct {
			EligibleRecords, ExactRepeatOpportunities int
			RepeatTokens                              struct{ CacheReadInput, ReasoningOutput int }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &oa); err != nil || oa.Ineligible.ProviderState != 2 || oa.APIs["openai-responses"].RepeatTokens.ReasoningOutput != 64 ||
		oa.APIs["openai-chat"].RepeatTokens.CacheReadInput != 5376 || oa.APIs["anthropic-messages"].EligibleRecords != 0 {
		t.Fatalf("--json openai: %v %s", err, r.stdout)
	}
	noPromptText(t, r, "analyze openai --json")

	// Exactly one source.
	for _, args := range [][]string{{"analyze"}, {"analyze", "--stdin", "--file", "capture.ndjson"}} {
		if r := run(t, dir, "", args...); r.code != 80 || !strings.Contains(r.stderr, "give exactly one capture") {
			t.Fatalf("%v: %d %q", args, r.code, r.stderr)
		}
	}
	noWorkspace(t, dir)
}

func TestBodyArgumentLimit(t *testing.T) {
	dir := t.TempDir()
	small := `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`
	exact := small + strings.Repeat(" ", 32<<20-len(small)) // whitespace is still one JSON document
	if r := run(t, dir, exact, "cache-report", "-"); r.code != 0 || !strings.HasPrefix(r.stdout, "cache-report: below-minimum") {
		t.Fatalf("exactly 32 MiB: %d %q", r.code, r.stderr)
	}
	if r := run(t, dir, exact+" ", "prune", "-"); r.code != 1 || !strings.Contains(r.stderr, "over the 33554432-byte limit") || r.stdout != "" {
		t.Fatalf("one byte over: %d %q", r.code, r.stderr)
	}
	noWorkspace(t, dir)
}
