package cacheplan

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// promptMarker is planted in every prompt of the compare fixtures: it must never appear in
// any result.
const promptMarker = "PROMPT-MARKER-7f3a"

func TestCompareFixtures(t *testing.T) {
	cases := []struct {
		dir              string
		class            Class
		path             string
		settings         []string
		appendedMessages int
		appendedBlocks   int
		moved            bool
		warnings         []string
	}{
		{"unchanged", ClassUnchanged, "", nil, 0, 0, true, nil},
		{"appended-messages", ClassAppendedMessages, "", nil, 2, 2, true, nil},
		{"appended-messages-lookback", ClassAppendedMessages, "", nil, 2, 22, false, []string{"lookback"}},
		{"appended-blocks", ClassAppendedBlocks, "", nil, 0, 1, false, nil},
		{"divergence-message", ClassDivergence, "messages[1].content[0]", nil, 0, 0, false, nil},
		{"divergence-truncated", ClassDivergence, "messages[1]", nil, 0, 0, true, nil},
		{"divergence-model", ClassDivergence, "model", []string{"model"}, 1, 1, false, nil},
		{"divergence-system", ClassDivergence, "system[0]", []string{"system"}, 1, 1, false, nil},
		{"divergence-tools", ClassDivergence, "tools[1]", []string{"tools"}, 1, 1, false, nil},
		{"divergence-tool-choice", ClassDivergence, "tool_choice", []string{"tool_choice"}, 1, 1, false, nil},
		{"divergence-thinking", ClassDivergence, "thinking", []string{"thinking"}, 1, 1, false, nil},
		{"responses-appended", ClassAppendedMessages, "", nil, 1, 1, false, []string{"below-minimum", "no-prompt-cache-key"}},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			prev := readFixture(t, filepath.Join("testdata/compare", c.dir, "previous.json"))
			cur := readFixture(t, filepath.Join("testdata/compare", c.dir, "current.json"))
			r, err := Compare(prev, cur)
			if err != nil {
				t.Fatal(err)
			}
			var warnings []string
			for _, w := range r.Warnings {
				warnings = append(warnings, w.Code)
			}
			if r.Class != c.class || r.FirstChangedPath != c.path || !slices.Equal(r.ChangedSettings, append([]string{}, c.settings...)) ||
				r.AppendedMessages != c.appendedMessages || r.AppendedBlocks != c.appendedBlocks || r.CacheControlMoved != c.moved || !slices.Equal(warnings, c.warnings) {
				t.Fatalf("got %s %q settings %v appended %d msgs %d blocks moved %v warnings %v",
					r.Class, r.FirstChangedPath, r.ChangedSettings, r.AppendedMessages, r.AppendedBlocks, r.CacheControlMoved, warnings)
			}
			if r.Recommendation == "" || r.Note != CompareNote {
				t.Fatalf("no recommendation or note")
			}
			out, _ := json.Marshal(r)
			if strings.Contains(string(out), promptMarker) || strings.Contains(r.Recommendation, promptMarker) {
				t.Fatalf("the comparison quotes a prompt")
			}
			if c.class != ClassDivergence || c.settings == nil {
				if r.ReusablePrefixBytes <= 0 {
					t.Fatalf("no reusable prefix for %s", c.class)
				}
			}
		})
	}
}

func TestCompareReusablePrefix(t *testing.T) {
	prev := readFixture(t, "testdata/compare/divergence-model/previous.json")
	cur := readFixture(t, "testdata/compare/divergence-model/current.json")
	r, _ := Compare(prev, cur)
	if r.ReusablePrefixBytes != 0 {
		t.Fatalf("a model change leaves %d reusable bytes", r.ReusablePrefixBytes)
	}
	prev = readFixture(t, "testdata/compare/divergence-thinking/previous.json")
	cur = readFixture(t, "testdata/compare/divergence-thinking/current.json")
	r, _ = Compare(prev, cur)
	if r.ReusablePrefixBytes == 0 {
		t.Fatalf("a thinking change keeps tools and system cached")
	}
	unchanged, _ := Compare(prev, prev)
	if unchanged.ReusablePrefixBytes <= r.ReusablePrefixBytes {
		t.Fatalf("unchanged %d <= diverged %d", unchanged.ReusablePrefixBytes, r.ReusablePrefixBytes)
	}
}

func TestCompareRefusals(t *testing.T) {
	anthropic := readFixture(t, "testdata/compare/appended-messages/previous.json")
	responses := readFixture(t, "testdata/compare/responses-appended/current.json")
	if _, err := Compare(anthropic, responses); !errors.Is(err, ErrUnsupportedFormat) || !strings.Contains(err.Error(), "the previous request is anthropic-messages and the current one openai-responses") {
		t.Fatalf("two APIs: %v", err)
	}
	if _, err := CompareWith(responses, responses, CompareOptions{Format: FormatOpenAIChat}); !errors.Is(err, ErrUnsupportedFormat) || !strings.HasPrefix(err.Error(), "previous request:") {
		t.Fatalf("a Responses body given as Chat: %v", err)
	}
	ok := []byte(`{"messages":[]}`)
	for _, c := range []struct {
		body string
		want error
	}{
		{`{"messages":[`, ErrInvalidJSON},
		{"{\"messages\":[],\"x\":\"\xff\"}", ErrNotUTF8},
		{`[1]`, ErrUnsupportedFormat},
		{`{"model":"m"}`, ErrUnsupportedFormat},
		{`{"messages":{}}`, ErrUnsupportedFormat},
		{`{"messages":["` + promptMarker + `"]}`, ErrUnsupportedFormat},
		{`{"messages":[],"messages":[]}`, ErrUnsupportedFormat},
	} {
		_, err := Compare(ok, []byte(c.body))
		if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), "current request:") || strings.Contains(err.Error(), promptMarker) {
			t.Errorf("%q: %v, want %v", c.body, err, c.want)
		}
	}
}

func TestCompareIgnoresMemberOrderAndEscapes(t *testing.T) {
	a := []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"é"}]}]}`)
	b := []byte(`{"messages":[{"content":[{"text":"\u00e9","type":"text"}],"role":"user"}],"model":"m"}`)
	r, err := Compare(a, b)
	if err != nil || r.Class != ClassUnchanged {
		t.Fatalf("%v %+v", err, r)
	}
	// Numbers compare by their text: conservative.
	c := []byte(`{"model":"m","max_tokens":1.0,"messages":[]}`)
	d := []byte(`{"model":"m","max_tokens":1,"messages":[]}`)
	if r, _ := Compare(c, d); r.Class != ClassDivergence || r.FirstChangedPath != "max_tokens" {
		t.Fatalf("%+v", r)
	}
	// A member name that is not an API field name is not echoed.
	e := []byte(`{"messages":[],"` + promptMarker + ` x":1}`)
	if r, _ := Compare(d, e); strings.Contains(r.FirstChangedPath+strings.Join(r.ChangedSettings, ""), promptMarker) {
		t.Fatalf("echoed a member name: %+v", r)
	}
}
