package cacheplan_test

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agent-rewind/rewind/cacheplan"
)

func Example() {
	// A short prompt is left alone: Sonnet 4.5 caches no prefix under 1024 tokens, so a
	// marker could not take effect.
	short := []byte(`{"model":"claude-sonnet-4-5","max_tokens":512,"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Summarise the log."}]}]}`)
	plan, err := cacheplan.PlanRequest(short, cacheplan.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(plan.Decision, plan.EstimatedPrefixTokens, "tokens, minimum", plan.MinimumTokens)

	// With a long stable system prompt, the marker goes at the end of the stable prefix.
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":512,"system":"` + strings.Repeat("Follow the house style. ", 200) + `","messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Summarise the log."}]}]}`)
	plan, err = cacheplan.PlanRequest(body, cacheplan.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(plan.Decision, plan.Breakpoints[0].Location, plan.EstimatedPrefixTokens, "tokens")
	out := plan.Apply(body)
	fmt.Println(string(out[strings.LastIndex(string(out), `{"type":"text"`):]))

	// The planned body now carries a marker, so planning it again leaves it alone.
	again, _ := cacheplan.PlanRequest(out, cacheplan.Options{})
	fmt.Println(again.Decision)

	prev := short
	cur := []byte(`{"model":"claude-sonnet-4-5","max_tokens":512,"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Summarise the log."}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"It shows two failures."}]},` +
		`{"role":"user","content":[{"type":"text","text":"Which one first?"}]}]}`)
	cmp, _ := cacheplan.Compare(prev, cur)
	fmt.Println(cmp.Class, cmp.AppendedMessages)
	// Output:
	// below-minimum 18 tokens, minimum 1024
	// insert messages[0].content[0] 1218 tokens
	// {"type":"text","text":"Summarise the log.","cache_control":{"type":"ephemeral"}}]}]}
	// client-supplied
	// appended-messages 2
}

func ExamplePrune() {
	out := strconv.Quote(strings.Repeat("ok  github.com/x/y 0.10s\n", 10))
	body := []byte(`{"messages":[` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":` + out + `}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":` + out + `}]}]}`)
	pruned, res, _ := cacheplan.Prune(body, cacheplan.PruneOptions{})
	fmt.Println(res.Pruned, res.References[0].Location, "->", res.References[0].First)
	fmt.Println(len(body)-len(pruned) == res.BytesSaved)
	// Output:
	// 1 messages[1].content[0] -> messages[0].content[0]
	// true
}

// Pruning OpenAI bodies: a Responses function_call_output and a Chat Completions tool
// message that repeat an earlier output under a new call id become references to it.
func ExamplePrune_openAI() {
	out := strconv.Quote(strings.Repeat("ok  github.com/x/y 0.10s\n", 10))
	responses := []byte(`{"model":"gpt-5.5","input":[` +
		`{"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"call_1","output":` + out + `},` +
		`{"type":"function_call","call_id":"call_2","name":"exec_command","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"call_2","output":` + out + `}]}`)
	pruned, res, _ := cacheplan.Prune(responses, cacheplan.PruneOptions{})
	fmt.Println(res.Format, res.Detection, res.References[0].Location, "->", res.References[0].First)
	fmt.Println(strings.Contains(string(pruned), `"call_id":"call_2","output":"[agent-rewind: identical to the earlier tool result at input[1].output (call_id call_1)`))

	chat := []byte(`{"model":"gpt-4.1","messages":[{"role":"user","content":"test it"},` +
		`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"go_test","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":` + out + `},` +
		`{"role":"assistant","tool_calls":[{"id":"call_2","type":"function","function":{"name":"go_test","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_2","content":` + out + `}]}`)
	_, res, _ = cacheplan.Prune(chat, cacheplan.PruneOptions{Format: cacheplan.FormatOpenAIChat})
	fmt.Println(res.Format, res.Detection, res.References[0].Location, "->", res.References[0].First)
	// Output:
	// openai-responses shape input[3].output -> input[1].output
	// true
	// openai-chat given messages[4].content -> messages[2].content
}

// OpenAI caches a prompt's prefix by itself: the plan reports how much of a Responses
// request the cache can hold and which part the previous turn already sent.
func ExamplePlanRequest_openAI() {
	body := []byte(`{"model":"gpt-5.5","prompt_cache_key":"session-1","instructions":"` + strings.Repeat("Follow the house style. ", 300) + `","input":[` +
		`{"role":"user","content":"Run the tests."},` +
		`{"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"go test ./...\"}"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"ok"}]}`)
	plan, err := cacheplan.PlanRequest(body, cacheplan.Options{})
	if err != nil {
		panic(err)
	}
	pc := plan.PrefixCaching
	fmt.Println(plan.Decision, plan.Format, plan.EstimatedPrefixTokens, "tokens,", pc.CacheableTokens, "cacheable")
	fmt.Println("new this turn from", pc.PreviousTurn.NewFrom, "after", pc.PreviousTurn.EstimatedTokens, "tokens the previous turn sent")
	fmt.Println(len(plan.Apply(body)) == len(body))
	// Output:
	// automatic openai-responses 1855 tokens, 1792 cacheable
	// new this turn from input[1] after 1812 tokens the previous turn sent
	// true
}

// Comparing two turns of a Responses conversation: the history only grew, and the turn id
// Codex puts in client_metadata is not part of the prompt.
func ExampleCompare_openAI() {
	prev := []byte(`{"model":"gpt-5.5","prompt_cache_key":"session-1","client_metadata":{"turn_id":"t1"},"input":[` +
		`{"role":"user","content":"Run the tests."}]}`)
	cur := []byte(`{"model":"gpt-5.5","prompt_cache_key":"session-1","client_metadata":{"turn_id":"t2"},"input":[` +
		`{"role":"user","content":"Run the tests."},` +
		`{"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"ok"}]}`)
	cmp, _ := cacheplan.Compare(prev, cur)
	fmt.Println(cmp.Format, cmp.Class, cmp.AppendedMessages, cmp.IgnoredSettings)
	other := []byte(`{"model":"gpt-5.5","prompt_cache_key":"session-2","input":[{"role":"user","content":"Run the tests."}]}`)
	cmp, _ = cacheplan.Compare(prev, other)
	fmt.Println(cmp.Class, cmp.FirstChangedPath, cmp.ReusablePrefixBytes)
	// Output:
	// openai-responses appended-messages 2 [client_metadata]
	// divergence prompt_cache_key 0
}
