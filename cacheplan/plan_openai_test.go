package cacheplan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// rawSizes measures a recorded body with encoding/json, independently of the planner: the
// raw bytes of its tools and instructions, and of its item array up to (and including) each
// item. The recordings are compact, so an array's bytes are its brackets, items and commas.
func rawSizes(t *testing.T, body []byte, array string) (head int, upTo []int, total int) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	head = len(top["tools"]) + len(top["instructions"])
	var items []json.RawMessage
	if err := json.Unmarshal(top[array], &items); err != nil {
		t.Fatal(err)
	}
	n := 1 // '['
	for k, it := range items {
		if k > 0 {
			n++
		}
		n += len(it)
		upTo = append(upTo, n)
	}
	return head, upTo, len(top[array])
}

func warningCodes(p *Plan) []string {
	var codes []string
	for _, w := range p.Warnings {
		codes = append(codes, w.Code)
	}
	return codes
}

func TestPlanOpenAIRecorded(t *testing.T) {
	for _, c := range []struct {
		file, array   string
		format        Format
		newFrom       string
		key           int
		warnings      []string
		tools, items  int
		systemBlocks  int
		messageBlocks int
	}{
		// Codex: developer and user messages, a tool search, then the model's function call
		// and its output: the previous request ended before the function call.
		{codexRecording, "input", FormatResponses, "input[6]", 36, nil, 13, 8, 0, 6},
		// Cline: system, user, the assistant's tool call, the tool's answer; no cache key.
		{clineRecording, "messages", FormatOpenAIChat, "messages[2]", 0, []string{"no-prompt-cache-key"}, 25, 4, 0, 3},
	} {
		body := readFixture(t, c.file)
		p, err := PlanRequest(body, Options{})
		if err != nil {
			t.Fatal(err)
		}
		head, upTo, total := rawSizes(t, body, c.array)
		pc := p.PrefixCaching
		if p.Decision != DecisionAutomatic || p.Format != c.format || p.Detection != DetectedByShape || pc == nil || len(p.Breakpoints) != 0 {
			t.Fatalf("%s: %+v", c.file, p)
		}
		if p.PrefixBytes != head+total || p.EstimatedPrefixTokens != EstimateTokens(head+total) || pc.CacheableTokens != p.EstimatedPrefixTokens/128*128 || p.MinimumTokens != 1024 {
			t.Errorf("%s: prefix %d bytes, %d tokens, %d cacheable; want %d bytes", c.file, p.PrefixBytes, p.EstimatedPrefixTokens, pc.CacheableTokens, head+total)
		}
		k := len(c.array) + 1 // "input[" or "messages["
		n := 0
		fmt.Sscanf(c.newFrom[k:], "%d", &n)
		prev := head + upTo[n-1]
		if pc.PreviousTurn == nil || pc.PreviousTurn.NewFrom.String() != c.newFrom || pc.PreviousTurn.Bytes != prev || pc.PreviousTurn.CacheableTokens != EstimateTokens(prev)/128*128 {
			t.Errorf("%s: previous turn %+v, want from %s, %d bytes", c.file, pc.PreviousTurn, c.newFrom, prev)
		}
		if pc.PromptCacheKey != (c.key > 0) || pc.PromptCacheKeyBytes != c.key || pc.ServerState || !slices.Equal(warningCodes(p), c.warnings) {
			t.Errorf("%s: key %v (%d bytes), warnings %v", c.file, pc.PromptCacheKey, pc.PromptCacheKeyBytes, warningCodes(p))
		}
		if p.Counts != (Counts{Tools: c.tools, SystemBlocks: c.systemBlocks, Messages: c.items, MessageBlocks: c.messageBlocks}) {
			t.Errorf("%s: counts %+v", c.file, p.Counts)
		}
		out, _ := json.Marshal(p)
		if strings.Contains(string(out), "01a2340c-ec96") || strings.Contains(string(out), "You are") {
			t.Errorf("%s: the plan quotes the body: %s", c.file, out)
		}
		checkApplied(t, body, p) // never changed
	}
}

// responsesOfTokens is a Responses body whose prompt (its input array) is n*4 bytes long:
// n tokens by the estimate.
func responsesOfTokens(n int) []byte {
	const frame = `[{"role":"user","content":""}]`
	return []byte(`{"model":"gpt-5.5","prompt_cache_key":"s1","input":[{"role":"user","content":"` + strings.Repeat("a", n*4-len(frame)) + `"}]}`)
}

func TestPlanOpenAIMinimumAndBlocks(t *testing.T) {
	for _, c := range []struct {
		tokens    int
		decision  Decision
		cacheable int
		warnings  []string
	}{
		{700, DecisionBelowMinimum, 0, nil}, // under 1024 tokens even at 3 bytes a token
		{1023, DecisionAutomatic, 0, []string{"below-minimum"}},
		{1024, DecisionAutomatic, 1024, nil},
		{1151, DecisionAutomatic, 1024, nil},
		{1152, DecisionAutomatic, 1152, nil},
		{100_000, DecisionAutomatic, 99_968, nil},
	} {
		body := responsesOfTokens(c.tokens)
		p, err := PlanRequest(body, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Decision != c.decision || p.EstimatedPrefixTokens != c.tokens || p.PrefixCaching.CacheableTokens != c.cacheable || !slices.Equal(warningCodes(p), c.warnings) {
			t.Errorf("%d tokens: %s, %d cacheable of %d, warnings %v", c.tokens, p.Decision, p.PrefixCaching.CacheableTokens, p.EstimatedPrefixTokens, warningCodes(p))
		}
		if p.PrefixCaching.PreviousTurn != nil {
			t.Errorf("%d tokens: a first turn has no previous turn", c.tokens)
		}
	}
	for n, want := range map[int]int{0: 0, 1023: 0, 1024: 1024, 1151: 1024, 1152: 1152, 1279: 1152, 4096: 4096} {
		if got := OpenAICacheableTokens(n); got != want {
			t.Errorf("OpenAICacheableTokens(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestPlanOpenAISettings(t *testing.T) {
	long := strings.Repeat("Follow the house style. ", 300)
	part := func(extra string) string { return `{"type":"input_text","text":"` + long + `"` + extra + `}` }
	bp := `,"prompt_cache_breakpoint":{"mode":"explicit"}`
	for _, c := range []struct {
		name     string
		body     string
		given    Format
		decision Decision
		existing []string
		warnings []string
		mode     string
		state    bool
	}{
		{"explicit breakpoints", `{"model":"gpt-5.6","prompt_cache_key":"k","input":[{"role":"developer","content":[` + part(bp) + `]},{"role":"user","content":"go"}]}`,
			"", DecisionAutomatic, []string{"input[0].content[0]/30m"}, nil, "", false},
		{"explicit mode", `{"model":"gpt-5.6","prompt_cache_key":"k","prompt_cache_options":{"mode":"explicit"},"input":[{"role":"developer","content":[` + part(bp) + `]}]}`,
			"", DecisionClientSupplied, []string{"input[0].content[0]/30m"}, nil, "explicit", false},
		{"explicit mode without a breakpoint", `{"model":"gpt-5.6","prompt_cache_key":"k","prompt_cache_options":{"mode":"explicit","ttl":"30m"},"prompt_cache_retention":"24h","input":[{"role":"developer","content":[` + part("") + `]}]}`,
			"", DecisionClientSupplied, nil, []string{"cache-options-conflict", "explicit-without-breakpoint"}, "explicit", false},
		{"a tool output's breakpoint", `{"model":"gpt-5.6","prompt_cache_key":"k","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[` + part(bp) + `]}]}`,
			"", DecisionAutomatic, []string{"input[1].output[0]/30m"}, nil, "", false},
		{"previous_response_id", `{"model":"gpt-5.5","prompt_cache_key":"k","previous_response_id":"resp_1","input":[` + part("") + `]}`,
			"", DecisionAutomatic, nil, []string{"server-state"}, "", true},
		{"item_reference", `{"model":"gpt-5.5","prompt_cache_key":"k","input":[{"type":"item_reference","id":"msg_1"},` + part("") + `]}`,
			"", DecisionAutomatic, nil, []string{"server-state"}, "", true},
		{"Chat breakpoint", `{"model":"gpt-5.6","prompt_cache_key":"k","messages":[{"role":"system","content":[{"type":"text","text":"` + long + `"` + bp + `}]},{"role":"user","content":"go"}]}`,
			"", DecisionAutomatic, []string{"messages[0].content[0]/30m"}, nil, "", false},
		{"plain text given as Chat", `{"model":"m","messages":[{"role":"user","content":"` + long + `"}]}`,
			FormatOpenAIChat, DecisionAutomatic, nil, []string{"no-prompt-cache-key"}, "", false},
	} {
		body := []byte(c.body)
		p, err := PlanRequest(body, Options{Format: c.given})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var existing []string
		for _, e := range p.Existing {
			existing = append(existing, e.Location.String()+"/"+string(e.TTL))
		}
		if p.Decision != c.decision || !slices.Equal(existing, c.existing) || !slices.Equal(warningCodes(p), c.warnings) || p.PrefixCaching.Mode != c.mode || p.PrefixCaching.ServerState != c.state {
			t.Errorf("%s: %s, existing %v, warnings %v, %+v", c.name, p.Decision, existing, warningCodes(p), p.PrefixCaching)
		}
		checkApplied(t, body, p)
		if out, _, err := Preserve(body, Options{Format: c.given}); err != nil || &out[0] != &body[0] {
			t.Errorf("%s: Preserve changed an OpenAI body", c.name)
		}
	}
}

func TestPlanOpenAIAmbiguous(t *testing.T) {
	body := []byte(`{"model":"gpt-5.5","prompt_cache_key":"k","input":"a","input":[{"role":"user","content":"` + strings.Repeat("b", 5000) + `"}]}`)
	p, err := PlanRequest(body, Options{})
	if err != nil || p.Decision != DecisionAmbiguous || p.PrefixCaching == nil {
		t.Fatalf("%v %+v", err, p)
	}
	checkApplied(t, body, p)
}
