package analyze

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The bodies and usage below are in the shapes OpenAI's API reference documents for
// POST /v1/responses and POST /v1/chat/completions (the CLI's end-to-end test runs the
// requests Codex CLI and Cline CLI really sent).
func responsesBody(text string) map[string]any {
	return map[string]any{"model": "gpt-5.5", "store": false, "stream": true, "prompt_cache_key": "session-1", "reasoning": map[string]any{"effort": "medium"},
		"input": []any{
			map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "You are a coding agent."}}},
			map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text + " " + marker}}},
		}}
}

func chatBody(text string) map[string]any {
	return map[string]any{"model": "gpt-4.1", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a coding agent."},
			map[string]any{"role": "user", "content": text + " " + marker},
		}}
}

var (
	responsesUsage = map[string]any{"input_tokens": 1200, "input_tokens_details": map[string]any{"cached_tokens": 1024}, "output_tokens": 80,
		"output_tokens_details": map[string]any{"reasoning_tokens": 32}, "total_tokens": 1280}
	chatUsage = map[string]any{"prompt_tokens": 900, "completion_tokens": 50, "total_tokens": 950,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 768, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
)

func responsesRec(fields map[string]any) string {
	f := map[string]any{"origin": "https://api.openai.com", "path": "/v1/responses", "headers": map[string]any{"content-type": "application/json"},
		"body": responsesBody("fix the build"), "usage": responsesUsage}
	for k, v := range fields {
		f[k] = v
	}
	return rec(f)
}

func chatRec(fields map[string]any) string {
	f := map[string]any{"origin": "https://api.openai.com", "path": "/v1/chat/completions", "headers": map[string]any{"content-type": "application/json"},
		"body": chatBody("fix the build"), "usage": chatUsage}
	for k, v := range fields {
		f[k] = v
	}
	return rec(f)
}

// openAIRecords are fuzz seeds: one record of each OpenAI form.
func openAIRecords() []string {
	return []string{responsesRec(nil), chatRec(nil), responsesRec(map[string]any{"headers": map[string]any{"OpenAI-Project": "proj_1", "openai-beta": "responses=v1"}})}
}

func TestOpenAIRepeatsAreCounted(t *testing.T) {
	rep := run(t, []string{
		responsesRec(nil), responsesRec(nil), // a Responses repeat: 1200-1024 uncached, 1024 cached, 80 output (32 reasoning)
		chatRec(nil), chatRec(nil), chatRec(nil), // two Chat repeats: 900-768, 768, 50 each
		rec(nil), rec(nil), // an Anthropic repeat: 100 + 20
		// The same body to another API, project or organization is another request.
		responsesRec(map[string]any{"path": "/v1/chat/completions"}),
		responsesRec(map[string]any{"headers": map[string]any{"openai-project": "proj_2"}}),
		responsesRec(map[string]any{"headers": map[string]any{"OpenAI-Organization": "org_2"}}),
		responsesRec(map[string]any{"headers": map[string]any{"openai-project": "proj_2"}}), // a repeat of that one
	}, Options{})
	want := Tokens{Input: 176 + 2*132 + 100 + 1200 - 1024, Output: 80 + 2*50 + 20 + 80, CacheReadInput: 1024 + 2*768 + 1024, ReasoningOutput: 64}
	want.Total = want.Input + want.Output + want.CacheReadInput
	if rep.EligibleRecords != 11 || rep.DistinctRequestKeys != 6 || rep.ExactRepeatOpportunities != 5 || rep.RepeatTokens != want {
		t.Fatalf("report %+v\nwant tokens %+v", rep, want)
	}
	apis := rep.APIs
	if apis.Responses.EligibleRecords != 5 || apis.Responses.ExactRepeatOpportunities != 2 || apis.Chat.EligibleRecords != 4 || apis.Chat.ExactRepeatOpportunities != 2 ||
		apis.Messages.EligibleRecords != 2 || apis.Messages.ExactRepeatOpportunities != 1 || apis.Chat.RepeatTokens.CacheReadInput != 2*768 {
		t.Fatalf("per API %+v", apis)
	}
}

func TestOpenAIProviderStateNeverCounts(t *testing.T) {
	var lines []string
	for range 2 {
		for _, member := range []map[string]any{
			{"previous_response_id": "resp_1"},
			{"conversation": "conv_1"},
			{"conversation": map[string]any{"id": "conv_1"}},
			{"background": true},
		} {
			body := responsesBody("go on")
			for k, v := range member {
				body[k] = v
			}
			lines = append(lines, responsesRec(map[string]any{"body": body}))
		}
		// A digest alone cannot show those members.
		lines = append(lines, responsesRec(map[string]any{"body": nil, "bodySha256": strings.Repeat("ab", 32)}))
	}
	rep := run(t, lines, Options{})
	if rep.Ineligible.ProviderState != 8 || rep.Ineligible.MissingBody != 2 || rep.EligibleRecords != 0 {
		t.Fatalf("ineligible %+v", rep.Ineligible)
	}
	// null state members and background false are plain requests; Chat has no such state.
	body := responsesBody("go on")
	body["previous_response_id"], body["conversation"], body["background"] = nil, nil, false
	rep = run(t, []string{responsesRec(map[string]any{"body": body}), responsesRec(map[string]any{"body": body}),
		chatRec(map[string]any{"body": nil, "bodySha256": strings.Repeat("cd", 32)}), chatRec(map[string]any{"body": nil, "bodySha256": strings.Repeat("cd", 32)})}, Options{})
	if rep.ExactRepeatOpportunities != 2 || rep.Ineligible != (Ineligible{}) {
		t.Fatalf("report %+v", rep)
	}
}

func TestOpenAIUsageValidated(t *testing.T) {
	for _, u := range []map[string]any{
		{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 11}},
		{"output_tokens": 1, "output_tokens_details": map[string]any{"reasoning_tokens": 2}},
		{"input_tokens_details": map[string]any{"cached_tokens": -1}},
		{"input_tokens_details": map[string]any{"cached_tokens": 1.5}},
	} {
		_, err := Run(strings.NewReader(responsesRec(map[string]any{"usage": u})), FormatNDJSON, Options{})
		if !errors.Is(err, ErrInvalidTokenCount) {
			t.Errorf("%v: %v", u, err)
		}
	}
	_, err := Run(strings.NewReader(chatRec(map[string]any{"usage": map[string]any{"prompt_tokens": 5, "prompt_tokens_details": map[string]any{"cached_tokens": 6}}})), FormatNDJSON, Options{})
	if !errors.Is(err, ErrInvalidTokenCount) {
		t.Errorf("chat cached over prompt: %v", err)
	}
	_, err = Run(strings.NewReader(chatRec(map[string]any{"usage": map[string]any{"prompt_tokens_details": "x"}})), FormatNDJSON, Options{})
	if !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("details not an object: %v", err)
	}
	// Another API's names are read, checked, and not counted: Anthropic's cache counts on a
	// Chat record, OpenAI's details on an Anthropic one.
	u := map[string]any{"prompt_tokens": 10, "completion_tokens": 2, "cache_read_input_tokens": 99, "input_tokens": 7}
	rep := run(t, []string{chatRec(map[string]any{"usage": u}), chatRec(map[string]any{"usage": u})}, Options{})
	if rep.RepeatTokens != (Tokens{Input: 10, Output: 2, Total: 12}) {
		t.Fatalf("chat tokens %+v", rep.RepeatTokens)
	}
}

func TestOpenAILegacySample(t *testing.T) {
	rep, err := Run(strings.NewReader(responsesRec(nil)+"\n"+responsesRec(map[string]any{"path": "/v1/responses?x=1"})+"\n"+responsesRec(map[string]any{"path": "/v1/responses?x=1"})), FormatNDJSON, Options{Legacy: true})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Legacy.Sample
	if s.Path != "/v1/responses" || !s.HasQuery || s.Repeats != 1 || s.Origin != "https://api.openai.com" {
		t.Fatalf("sample %+v", s)
	}
	b, _ := json.Marshal(rep)
	if strings.Contains(string(b), marker) || strings.Contains(string(b), "session-1") {
		t.Fatalf("the sample shows a value: %s", b)
	}
}
