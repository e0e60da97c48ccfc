package cacheplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type planWant struct {
	decision    Decision
	breakpoints []string // "role@location"
	existing    []string // "location/ttl"
	warnings    []string // codes
	automatic   bool
	below       bool
}

var planFixtures = map[string]planWant{
	"insert-last-block":               {decision: DecisionInsert, breakpoints: []string{"tail@messages[2].content[1]"}},
	"insert-string-content":           {decision: DecisionInsert, breakpoints: []string{"tail@messages[2].content"}},
	"insert-skips-thinking-and-empty": {decision: DecisionInsert, breakpoints: []string{"tail@messages[1].content[0]"}},
	"insert-system-only":              {decision: DecisionInsert, breakpoints: []string{"tail@system"}},
	"insert-tools-only":               {decision: DecisionInsert, breakpoints: []string{"tail@tools[1]"}},
	"client-supplied-block":           {decision: DecisionClientSupplied, existing: []string{"system[0]/1h", "messages[0].content[0]/5m"}},
	"client-supplied-automatic":       {decision: DecisionClientSupplied, existing: []string{"cache_control/5m"}, automatic: true},
	"client-supplied-nested":          {decision: DecisionClientSupplied, existing: []string{"messages[0].content[0].content[0]/5m"}},
	"client-supplied-over-limit-ttl-order": {
		decision: DecisionClientSupplied,
		existing: []string{"tools[0]/5m", "system[0]/1h", "messages[0].content[0]/5m", "messages[0].content[1]/5m", "messages[0].content[2]/5m"},
		warnings: []string{"ttl-invalid", "ttl-order", "over-limit"},
	},
	"no-cacheable-block":             {decision: DecisionNoCacheableBlock},
	"openai-responses-below-minimum": {decision: DecisionBelowMinimum, below: true, automatic: true, warnings: []string{"no-prompt-cache-key"}},
	"openai-chat-below-minimum":      {decision: DecisionBelowMinimum, below: true, automatic: true, warnings: []string{"no-prompt-cache-key"}},
	"unsupported-gemini":             {decision: DecisionUnsupported},
	"unsupported-not-object":         {decision: DecisionUnsupported},
	"ambiguous-duplicate-messages":   {decision: DecisionAmbiguous},
	"cache-control-null":             {decision: DecisionInsert, breakpoints: []string{"tail@messages[0].content[0]"}},
}

// placement plans with a minimum every prefix reaches: the fixtures are small, and what they
// test is where markers go (TestPlanBelowMinimum tests the minimum).
var placement = Options{MinimumTokens: 1}

func TestPlanFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/plan/*.json")
	if len(files) != len(planFixtures) {
		t.Errorf("%d fixture files, %d expectations", len(files), len(planFixtures))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			want, ok := planFixtures[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			body := readFixture(t, f)
			p, err := PlanRequest(body, placement)
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, want)
			checkApplied(t, body, p)
		})
	}
}

func checkPlan(t *testing.T, p *Plan, want planWant) {
	t.Helper()
	if p.Decision != want.decision {
		t.Errorf("decision %s (%s), want %s", p.Decision, p.Reason, want.decision)
	}
	var bps, existing, warnings []string
	for _, b := range p.Breakpoints {
		bps = append(bps, string(b.Role)+"@"+b.Location.String())
	}
	for _, b := range p.Existing {
		existing = append(existing, b.Location.String()+"/"+string(b.TTL))
	}
	for _, w := range p.Warnings {
		warnings = append(warnings, w.Code)
	}
	if !slices.Equal(bps, want.breakpoints) {
		t.Errorf("breakpoints %v, want %v", bps, want.breakpoints)
	}
	if !slices.Equal(existing, want.existing) {
		t.Errorf("existing %v, want %v", existing, want.existing)
	}
	if !slices.Equal(warnings, want.warnings) {
		t.Errorf("warnings %v, want %v", warnings, want.warnings)
	}
	if p.AutomaticCaching != want.automatic || p.BelowMinimum != want.below {
		t.Errorf("automatic %v below %v, want %v %v", p.AutomaticCaching, p.BelowMinimum, want.automatic, want.below)
	}
}

// checkApplied verifies byte preservation: the applied body is the original with exactly the
// planned pieces inserted at the planned offsets, it is valid JSON, it decodes to the original
// value plus the markers, and planning it again finds the markers as client-supplied.
func checkApplied(t testing.TB, body []byte, p *Plan) {
	t.Helper()
	out := p.Apply(body)
	if p.Decision != DecisionInsert {
		if &out[0] != &body[0] {
			t.Fatalf("decision %s changed the body", p.Decision)
		}
		return
	}
	mk := p.TTL.marker()
	// Byte level: walk the body and the output together.
	bi, oi := 0, 0
	expect := func(n int) {
		if !bytes.Equal(out[oi:oi+n], body[bi:bi+n]) {
			t.Fatalf("body bytes %d..%d changed", bi, bi+n)
		}
		bi += n
		oi += n
	}
	insert := func(s string) {
		if !bytes.HasPrefix(out[oi:], []byte(s)) {
			t.Fatalf("expected %q at output byte %d", s, oi)
		}
		oi += len(s)
	}
	for _, b := range p.Breakpoints {
		if b.wrap {
			if body[b.start] != '"' || body[b.end-1] != '"' {
				t.Fatalf("wrap target is not a string")
			}
			expect(b.start - bi)
			insert(wrapOpen)
			expect(b.end - b.start)
			insert(mk)
			insert(wrapClose)
		} else {
			if body[b.start] != '{' || body[b.end-1] != '}' {
				t.Fatalf("target is not an object")
			}
			expect(b.end - 1 - bi)
			insert(mk)
		}
	}
	expect(len(body) - bi)
	if oi != len(out) {
		t.Fatalf("output has %d extra bytes", len(out)-oi)
	}
	if !json.Valid(out) {
		t.Fatalf("output is not valid JSON")
	}
	// Value level.
	var in, got any
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for _, b := range p.Breakpoints {
		got = stripMarker(t, got, b)
	}
	if !reflect.DeepEqual(in, got) {
		t.Fatalf("output decodes to a different request once the markers are removed")
	}
	again, err := PlanRequest(out, Options{Format: p.Format}) // as the API it was read as
	if err != nil || again.Decision != DecisionClientSupplied || len(again.Existing) != len(p.Breakpoints) {
		t.Fatalf("replanning the output: %v %+v", err, again)
	}
}

// stripMarker removes the marker of b from the decoded request v.
func stripMarker(t testing.TB, v any, b Breakpoint) any {
	t.Helper()
	req := v.(map[string]any)
	want := map[string]any{"type": "ephemeral"}
	if b.TTL == TTL1h {
		want["ttl"] = "1h"
	}
	strip := func(obj map[string]any) {
		if !reflect.DeepEqual(obj["cache_control"], want) {
			t.Fatalf("no marker at %s", b.Location)
		}
		delete(obj, "cache_control")
	}
	unwrap := func(x any) any {
		arr := x.([]any)
		blk := arr[0].(map[string]any)
		strip(blk)
		return blk["text"]
	}
	l := b.Location
	switch l.Section {
	case SectionTools:
		strip(req["tools"].([]any)[l.Index].(map[string]any))
	case SectionSystem:
		if l.Index < 0 {
			req["system"] = unwrap(req["system"])
		} else {
			strip(req["system"].([]any)[l.Index].(map[string]any))
		}
	case SectionMessages:
		msg := req["messages"].([]any)[l.Index].(map[string]any)
		if l.Block < 0 {
			msg["content"] = unwrap(msg["content"])
		} else {
			strip(msg["content"].([]any)[l.Block].(map[string]any))
		}
	}
	return v
}

// agentTurn builds a request whose last assistant turn made n parallel tool calls, so the
// tail is 2n blocks past the previous request's end.
func agentTurn(n int, thinkingWindow bool) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"text","text":"start"}]},{"role":"assistant","content":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if thinkingWindow {
			b.WriteString(`{"type":"thinking","thinking":"t","signature":"s"}`)
		} else {
			fmt.Fprintf(&b, `{"type":"tool_use","id":"toolu_%02d","name":"f","input":{}}`, i)
		}
	}
	b.WriteString(`]},{"role":"user","content":[`)
	m := n
	if thinkingWindow {
		m = 1
	}
	for i := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"tool_result","tool_use_id":"toolu_%02d","content":"r%d"}`, i, i)
	}
	b.WriteString(`]}]}`)
	return []byte(b.String())
}

func TestPlanLookbackBridge(t *testing.T) {
	cases := []struct {
		n        int
		thinking bool
		want     planWant
	}{
		// 10 calls: 20 blocks after the previous end, exactly at the lookback: no bridge.
		{10, false, planWant{decision: DecisionInsert, breakpoints: []string{"tail@messages[2].content[9]"}}},
		// 11 calls: 22 blocks: a bridge at the 20th block after the previous end.
		{11, false, planWant{decision: DecisionInsert, breakpoints: []string{"bridge@messages[2].content[8]", "tail@messages[2].content[10]"}}},
		// 21 thinking blocks fill the window: nothing can bridge it.
		{21, true, planWant{decision: DecisionInsert, breakpoints: []string{"tail@messages[2].content[0]"}, warnings: []string{"lookback-gap"}}},
	}
	for _, c := range cases {
		body := agentTurn(c.n, c.thinking)
		p, err := PlanRequest(body, placement)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, p, c.want)
		checkApplied(t, body, p)
	}
}

func TestPlanTTL1h(t *testing.T) {
	body := readFixture(t, "testdata/plan/insert-last-block.json")
	p, err := PlanRequest(body, Options{TTL: TTL1h, MinimumTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Breakpoints[0].TTL != TTL1h || !bytes.Contains(p.Apply(body), []byte(`"ttl":"1h"`)) {
		t.Fatalf("1h marker not planned: %+v", p.Breakpoints)
	}
	checkApplied(t, body, p)
	if _, err := PlanRequest(body, Options{TTL: "2h"}); !errors.Is(err, ErrInvalidTTL) {
		t.Fatalf("bad TTL: %v", err)
	}
}

func TestPlanInvalidJSON(t *testing.T) {
	for _, body := range []string{``, `{`, `{"messages":[}`, `{"messages":[]} x`, `{"messages":[{"role":"user","content":"a` + "\x01" + `"}]}`} {
		body, out, err := []byte(body), []byte(nil), error(nil)
		out, _, err = Preserve(body, Options{})
		var se *SyntaxError
		if !errors.Is(err, ErrInvalidJSON) || !errors.As(err, &se) {
			t.Errorf("%q: error %v", body, err)
		}
		if !bytes.Equal(out, body) {
			t.Errorf("%q: body changed on error", body)
		}
	}
}

func TestPlanPrefixEstimate(t *testing.T) {
	// A long system prompt pushes the estimate over Sonnet 4.5's 1024-token minimum.
	sys := strings.Repeat("stable instructions ", 300) // 6000 bytes
	body := []byte(`{"model":"claude-sonnet-4-5","system":"` + sys + `","messages":[{"role":"user","content":"go"}]}`)
	p, err := PlanRequest(body, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.BelowMinimum || p.MinimumTokens != 1024 || p.PrefixBytes < len(sys) || p.EstimatedPrefixTokens != EstimateTokens(p.PrefixBytes) {
		t.Fatalf("plan %+v", p)
	}
}

// TestPlanBelowMinimum: a prefix that cannot reach the model's minimum cacheable length even
// at DenseBytesPerToken bytes a token gets no marker and the body is left as it is; from that
// many bytes on it gets its marker (with a below-minimum warning while the estimate is under
// the minimum). Unknown models are planned as before, unless Options gives their minimum.
func TestPlanBelowMinimum(t *testing.T) {
	// Sonnet 4.5's minimum is 1024 tokens: the boundary is a 2048-byte prefix.
	withSystem := func(n int) []byte {
		return []byte(`{"model":"claude-sonnet-4-5","system":"` + strings.Repeat("s", n) + `","messages":[{"role":"user","content":"go"}]}`)
	}
	base, err := PlanRequest(withSystem(0), placement)
	if err != nil {
		t.Fatal(err)
	}
	pad := 1024*DenseBytesPerToken - base.PrefixBytes
	for _, c := range []struct {
		name string
		body []byte
		want planWant
	}{
		{"fixture far below", readFixture(t, "testdata/plan/insert-last-block.json"), planWant{decision: DecisionBelowMinimum, below: true}},
		{"one byte short", withSystem(pad - 1), planWant{decision: DecisionBelowMinimum, below: true}},
		{"at the boundary", withSystem(pad), planWant{decision: DecisionInsert, breakpoints: []string{"tail@messages[0].content"}, warnings: []string{"below-minimum"}, below: true}},
		{"estimate reaches the minimum", withSystem(pad + 2048), planWant{decision: DecisionInsert, breakpoints: []string{"tail@messages[0].content"}}},
		{"unknown model", []byte(`{"model":"in-house-proxy-model","messages":[{"role":"user","content":"go"}]}`), planWant{decision: DecisionInsert, breakpoints: []string{"tail@messages[0].content"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanRequest(c.body, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, c.want)
			checkApplied(t, c.body, p)
			if p.Decision == DecisionBelowMinimum && (!strings.Contains(p.Reason, "1024-token minimum for claude-sonnet-4-5") || p.PrefixBytes == 0) {
				t.Errorf("reason %q, prefix %d bytes", p.Reason, p.PrefixBytes)
			}
			out, _, err := Preserve(c.body, Options{})
			if err != nil || bytes.Equal(out, c.body) != (c.want.decision != DecisionInsert) {
				t.Errorf("Preserve changed the body = %v (%v), want %v", !bytes.Equal(out, c.body), err, c.want.decision == DecisionInsert)
			}
		})
	}

	// A caller that knows an unknown model's minimum gives it.
	p, err := PlanRequest([]byte(`{"model":"in-house-proxy-model","messages":[{"role":"user","content":"go"}]}`), Options{MinimumTokens: 1024})
	if err != nil || p.Decision != DecisionBelowMinimum || p.MinimumTokens != 1024 || !strings.Contains(p.Reason, "minimum for the model") {
		t.Fatalf("Options.MinimumTokens: %v %+v", err, p)
	}
}

// TestPlanBridgeBelowMinimum: a bridge whose prefix cannot reach the minimum is left out (the
// previous request's shorter prefix was not cached either), while the tail, long enough, keeps
// its marker.
func TestPlanBridgeBelowMinimum(t *testing.T) {
	body := agentTurn(11, false)
	both, err := PlanRequest(body, placement)
	if err != nil || len(both.Breakpoints) != 2 {
		t.Fatalf("%v %+v", err, both)
	}
	bridge, tail := both.Breakpoints[0].PrefixBytes, both.Breakpoints[1].PrefixBytes
	if bridge >= tail-1 {
		t.Fatalf("bridge prefix %d, tail prefix %d", bridge, tail)
	}
	// A minimum the tail reaches and the bridge does not.
	p, err := PlanRequest(body, Options{MinimumTokens: tail / DenseBytesPerToken})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p, planWant{decision: DecisionInsert, breakpoints: []string{"tail@messages[2].content[10]"}, warnings: []string{"below-minimum"}, below: true})
	checkApplied(t, body, p)
	// One both reach keeps both.
	p, err = PlanRequest(body, Options{MinimumTokens: bridge / DenseBytesPerToken})
	if err != nil || len(p.Breakpoints) != 2 {
		t.Fatalf("%v %+v", err, p.Breakpoints)
	}
}

func TestMinimumCacheableTokens(t *testing.T) {
	cases := map[string]int{
		"claude-opus-4-6":                          4096,
		"claude-opus-4-20250514":                   1024,
		"claude-opus-4-1-20250805":                 1024,
		"claude-sonnet-4-5-20250929":               1024,
		"claude-haiku-4-5-20251001":                4096,
		"claude-3-haiku-20240307":                  2048,
		"anthropic.claude-3-5-haiku-20241022-v1:0": 2048,
		"claude-opus-4-6@20260101":                 4096,
		"claude-opus-5":                            512,
		"claude-fable-5-1":                         512,
		"claude-sonnet-5-5":                        1024,
		"claude-opus-4-7":                          2048,
		"claude-opus-4-8":                          1024,
		"claude-haiku-5-5":                         0,
		"gpt-4o":                                   0,
		"claude-opus-40":                           0,
	}
	for model, want := range cases {
		got, _, ok := MinimumCacheableTokens(model)
		if got != want || ok != (want != 0) {
			t.Errorf("%s: %d %v, want %d", model, got, ok, want)
		}
	}
}

func TestLocationString(t *testing.T) {
	for want, l := range map[string]Location{
		"tools[2]":                          {SectionTools, 2, -1, -1, ""},
		"system":                            {SectionSystem, -1, -1, -1, ""},
		"system[0]":                         {SectionSystem, 0, -1, -1, ""},
		"messages[3].content":               {SectionMessages, 3, -1, -1, ""},
		"messages[3].content[1]":            {SectionMessages, 3, 1, -1, ""},
		"messages[3].content[1].content[0]": {SectionMessages, 3, 1, 0, ""},
		"cache_control":                     {SectionTop, -1, -1, -1, ""},
		"instructions":                      {SectionInstructions, -1, -1, -1, ""},
		"input":                             {SectionInput, -1, -1, -1, ""},
		"input[7]":                          {SectionInput, 7, -1, -1, ""},
		"input[7].output":                   {SectionInput, 7, -1, -1, "output"},
		"input[0].content[2]":               {SectionInput, 0, 2, -1, ""},
		"messages[4]":                       {SectionChat, 4, -1, -1, ""},
		"messages[4].content":               {SectionChat, 4, -1, -1, "content"},
		"messages[4].content[1]":            {SectionChat, 4, 1, -1, ""},
		"input[3].output[1]":                {SectionInput, 3, 1, -1, "output"},
	} {
		if got := l.String(); got != want {
			t.Errorf("%+v: %s, want %s", l, got, want)
		}
	}
}
