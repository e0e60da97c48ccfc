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

func BenchmarkPrune(b *testing.B) {
	body := agentBody(256 << 10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		_, res, err := Prune(body, PruneOptions{})
		if err != nil || res.Pruned == 0 {
			b.Fatal(err)
		}
	}
}

// compareBodies returns two consecutive requests of about 1 MiB each.
func compareBodies() ([]byte, []byte) {
	prev := agentBody(1 << 20)
	cur := append([]byte{}, prev[:len(prev)-2]...)
	cur = append(cur, `,{"role":"assistant","content":[{"type":"text","text":"Done."}]},{"role":"user","content":[{"type":"text","text":"Thanks."}]}]}`...)
	return prev, cur
}

func BenchmarkCompare(b *testing.B) {
	prev, cur := compareBodies()
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
