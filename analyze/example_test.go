package analyze_test

import (
	"fmt"
	"strings"

	"github.com/agent-rewind/rewind/analyze"
)

func Example() {
	capture := strings.Join([]string{
		`{"method":"POST","origin":"https://api.anthropic.com","path":"/v1/messages","headers":{"anthropic-version":"2023-06-01"},"body":{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]},"usage":{"input_tokens":10,"output_tokens":3}}`,
		// The same request with its members in another order: an exact repeat.
		`{"path":"/v1/messages","method":"POST","origin":"https://api.anthropic.com","headers":{"anthropic-version":"2023-06-01"},"body":{"messages":[{"content":"hi","role":"user"}],"model":"claude-sonnet-4-5"},"usage":{"input_tokens":10,"output_tokens":3}}`,
		// An unknown origin never counts.
		`{"method":"POST","origin":"https://proxy.example","path":"/v1/messages","body":{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}}`,
	}, "\n")
	rep, err := analyze.Run(strings.NewReader(capture), analyze.FormatNDJSON, analyze.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Records, rep.EligibleRecords, rep.ExactRepeatOpportunities, rep.RepeatTokens.Total, rep.Ineligible.UnknownOrigin)
	// Output:
	// 3 2 1 13 1
}

// OpenAI traffic: a repeated Responses request counts, with its cached input moved to cache
// reads; one that continues a stored conversation does not.
func Example_openAI() {
	capture := strings.Join([]string{
		`{"method":"POST","origin":"https://api.openai.com","path":"/v1/responses","body":{"model":"gpt-5.5","store":false,"input":[{"role":"user","content":"hi"}]},"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1024},"output_tokens":80}}`,
		`{"method":"POST","origin":"https://api.openai.com","path":"/v1/responses","body":{"input":[{"content":"hi","role":"user"}],"model":"gpt-5.5","store":false},"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1024},"output_tokens":80}}`,
		`{"method":"POST","origin":"https://api.openai.com","path":"/v1/responses","body":{"model":"gpt-5.5","previous_response_id":"resp_1","input":"and then?"}}`,
	}, "\n")
	rep, err := analyze.Run(strings.NewReader(capture), analyze.FormatNDJSON, analyze.Options{})
	if err != nil {
		panic(err)
	}
	t := rep.APIs.Responses.RepeatTokens
	fmt.Println(rep.APIs.Responses.ExactRepeatOpportunities, t.Input, t.CacheReadInput, t.Output, rep.Ineligible.ProviderState)
	// Output:
	// 1 176 1024 80 1
}
