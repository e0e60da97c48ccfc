package cacheplan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// agentBody builds a realistic agent-loop request of about size bytes: tools, a system
// prompt, and turns of tool calls whose results are a couple of KiB of text, every third one a
// repeat of an earlier result.
func agentBody(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":8192,"stream":true,"tools":[`)
	for i := range 12 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"tool_%d","description":"%s","input_schema":{"type":"object","properties":{"path":{"type":"string","description":"A path."},"limit":{"type":"integer"}},"required":["path"]}}`, i, strings.Repeat("Does one careful thing. ", 12))
	}
	b.WriteString(`],"system":[{"type":"text","text":"` + strings.Repeat("You are a careful coding agent working in a Go repository. ", 60) + `"}],"messages":[`)
	b.WriteString(`{"role":"user","content":[{"type":"text","text":"Make the tests pass, then tidy up."}]}`)
	line := "=== RUN   TestSomething/with_a_subtest\n--- PASS: TestSomething/with_a_subtest (0.01s)\n"
	for turn := 0; b.Len() < size; turn++ {
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"text","text":"Running step %d."},{"type":"tool_use","id":"toolu_%06d","name":"tool_1","input":{"path":"pkg/%d"}}]}`, turn, turn, turn)
		out := strings.Repeat(line, 20)
		if turn%3 != 0 {
			out = fmt.Sprintf("step %d\n%s", turn, out)
		}
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%06d","content":%q}]}`, turn, out)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func BenchmarkPlan(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10, 1 << 20} {
		body := agentBody(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := PlanRequest(body, Options{})
				if err != nil || p.Decision != DecisionInsert {
					b.Fatal(err, p.Decision)
				}
			}
		})
	}
}

func BenchmarkPlanApply(b *testing.B) {
	body := agentBody(256 << 10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		out, _, err := Preserve(body, Options{})
		if err != nil || len(out) <= len(body) {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanAlternative is the real alternative the planner avoids: decoding the body into
// maps and encoding it again (which also loses member order and the client's bytes).
func BenchmarkPlanAlternative(b *testing.B) {
	body := agentBody(256 << 10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
		msgs := v["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
		last[len(last)-1].(map[string]any)["cache_control"] = map[string]any{"type": "ephemeral"}
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

// openAIBody builds the same agent loop as agentBody in an OpenAI API's shapes: function
// tools, instructions (a system message for Chat), and turns of function calls whose outputs
// are a couple of KiB, every third one a repeat of an earlier output.
func openAIBody(f Format, size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-5.5","stream":true,"prompt_cache_key":"session-1","tools":[`)
	for i := range 12 {
		if i > 0 {
			b.WriteByte(',')
		}
		params := `{"type":"object","properties":{"path":{"type":"string","description":"A path."},"limit":{"type":"integer"}},"required":["path"]}`
		desc := strings.Repeat("Does one careful thing. ", 12)
		if f == FormatResponses {
			fmt.Fprintf(&b, `{"type":"function","name":"tool_%d","description":"%s","parameters":%s}`, i, desc, params)
		} else {
			fmt.Fprintf(&b, `{"type":"function","function":{"name":"tool_%d","description":"%s","parameters":%s}}`, i, desc, params)
		}
	}
	system := strings.Repeat("You are a careful coding agent working in a Go repository. ", 60)
	if f == FormatResponses {
		b.WriteString(`],"instructions":"` + system + `","input":[{"role":"user","content":[{"type":"input_text","text":"Make the tests pass, then tidy up."}]}`)
	} else {
		b.WriteString(`],"messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"Make the tests pass, then tidy up."}`)
	}
	line := "=== RUN   TestSomething/with_a_subtest\n--- PASS: TestSomething/with_a_subtest (0.01s)\n"
	for turn := 0; b.Len() < size; turn++ {
		out := strings.Repeat(line, 20)
		if turn%3 != 0 {
			out = fmt.Sprintf("step %d\n%s", turn, out)
		}
		if f == FormatResponses {
			fmt.Fprintf(&b, `,{"type":"function_call","call_id":"call_%06d","name":"tool_1","arguments":"{\"path\":\"pkg/%d\"}"},{"type":"function_call_output","call_id":"call_%06d","output":%q}`, turn, turn, turn, out)
		} else {
			fmt.Fprintf(&b, `,{"role":"assistant","content":"Running step %d.","tool_calls":[{"id":"call_%06d","type":"function","function":{"name":"tool_1","arguments":"{\"path\":\"pkg/%d\"}"}}]},{"role":"tool","tool_call_id":"call_%06d","content":%q}`, turn, turn, turn, turn, out)
		}
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkPrune prunes a 256 KiB agent loop of each API, with the format detected (the
// CLI) and given (a gateway, which knows it from the path).
func BenchmarkPrune(b *testing.B) {
	for _, c := range []struct {
		format Format
		body   []byte
	}{{FormatMessages, agentBody(256 << 10)}, {FormatResponses, openAIBody(FormatResponses, 256<<10)}, {FormatOpenAIChat, openAIBody(FormatOpenAIChat, 256<<10)}} {
		for _, given := range []Format{"", c.format} {
			name := string(c.format) + "/detected"
			if given != "" {
				name = string(c.format) + "/given"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(c.body)))
				b.ReportAllocs()
				for b.Loop() {
					_, res, err := Prune(c.body, PruneOptions{Format: given})
					if err != nil || res.Pruned == 0 || res.Format != c.format {
						b.Fatal(err, res)
					}
				}
			})
		}
	}
}

// BenchmarkPlanOpenAI reports on OpenAI's caching of 256 KiB agent loops.
func BenchmarkPlanOpenAI(b *testing.B) {
	for _, f := range []Format{FormatResponses, FormatOpenAIChat} {
		body := openAIBody(f, 256<<10)
		b.Run(string(f), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := PlanRequest(body, Options{})
				if err != nil || p.Decision != DecisionAutomatic || p.PrefixCaching.PreviousTurn == nil {
					b.Fatal(err, p)
				}
			}
		})
	}
}

// compareBodies returns two consecutive requests of about 1 MiB each.
func compareBodies() ([]byte, []byte) {
	prev := agentBody(1 << 20)
	cur := append([]byte{}, prev[:len(prev)-2]...)
	cur = append(cur, `,{"role":"assistant","content":[{"type":"text","text":"Done."}]},{"role":"user","content":[{"type":"text","text":"Thanks."}]}]}`...)
	return prev, cur
}

// BenchmarkCompare compares two consecutive 1 MiB Messages requests, with their format
// detected (which walks each body once more) and given.
func BenchmarkCompare(b *testing.B) {
	prev, cur := compareBodies()
	for _, given := range []Format{"", FormatMessages} {
		name := "detected"
		if given != "" {
			name = "given"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(prev) + len(cur)))
			b.ReportAllocs()
			for b.Loop() {
				c, err := CompareWith(prev, cur, CompareOptions{Format: given})
				if err != nil || c.Class != ClassAppendedMessages {
					b.Fatal(err, c.Class)
				}
			}
		})
	}
}

// BenchmarkCompareOpenAI compares two consecutive 1 MiB Responses requests.
func BenchmarkCompareOpenAI(b *testing.B) {
	prev := openAIBody(FormatResponses, 1<<20)
	cur := append([]byte{}, prev[:len(prev)-2]...)
	cur = append(cur, `,{"type":"function_call","call_id":"call_x","name":"tool_1","arguments":"{}"},{"type":"function_call_output","call_id":"call_x","output":"ok"}]}`...)
	b.SetBytes(int64(len(prev) + len(cur)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := Compare(prev, cur)
		if err != nil || c.Class != ClassAppendedMessages {
			b.Fatal(err, c.Class)
		}
	}
}

// BenchmarkCompareAlternative decodes both bodies with encoding/json and compares the
// decoded messages one by one with reflect.DeepEqual.
func BenchmarkCompareAlternative(b *testing.B) {
	prev, cur := compareBodies()
	b.SetBytes(int64(len(prev) + len(cur)))
	b.ReportAllocs()
	for b.Loop() {
		var p, c map[string]any
		if json.Unmarshal(prev, &p) != nil || json.Unmarshal(cur, &c) != nil {
			b.Fatal("decode")
		}
		pm, cm := p["messages"].([]any), c["messages"].([]any)
		k := 0
		for k < len(pm) && reflect.DeepEqual(pm[k], cm[k]) {
			k++
		}
		if k != len(pm) {
			b.Fatal("diverged")
		}
	}
}
