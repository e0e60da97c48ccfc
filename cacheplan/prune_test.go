package cacheplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

const referencePrefix = `"[agent-rewind: identical to the earlier tool result at `

func TestPruneFixture(t *testing.T) {
	body := readFixture(t, "testdata/prune/repeated.json")
	out, res, err := Prune(body, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.References {
		got = append(got, r.Location.String()+"->"+r.First.String())
	}
	want := []string{"messages[4].content[0]->messages[2].content[0]", "messages[6].content[3]->messages[2].content[0]"}
	if !slices.Equal(got, want) || res.Pruned != 2 || res.ToolResults != 8 {
		t.Fatalf("references %v (pruned %d of %d), want %v", got, res.Pruned, res.ToolResults, want)
	}
	if res.BytesSaved != len(body)-len(out) || res.BytesSaved <= 0 || res.BytesAfter != len(out) {
		t.Fatalf("sizes %+v for %d -> %d", res, len(body), len(out))
	}
	if !bytes.Contains(out, []byte(referencePrefix+`messages[2].content[0] (tool_use_id toolu_01)`)) {
		t.Fatalf("reference text missing")
	}
	checkPruned(t, body, out, res)
}

// checkPruned verifies that only the referenced contents changed: putting each original
// content back in place of its reference gives the body back byte for byte.
func checkPruned(t testing.TB, body, out []byte, res *PruneResult) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("pruned body is not valid JSON")
	}
	var rebuilt []byte
	rest := out
	for _, r := range res.References {
		k := bytes.Index(rest, []byte(referencePrefix))
		if k < 0 {
			t.Fatalf("reference for %s not found", r.Location)
		}
		end := bytes.Index(rest[k:], []byte(`]"`))
		start, stop := contentSpan(t, body, r.Location)
		if stop-start != r.Bytes {
			t.Fatalf("reference %s: %d bytes reported, %d in body", r.Location, r.Bytes, stop-start)
		}
		rebuilt = append(rebuilt, rest[:k]...)
		rebuilt = append(rebuilt, body[start:stop]...)
		rest = rest[k+end+2:]
	}
	rebuilt = append(rebuilt, rest...)
	if !bytes.Equal(rebuilt, body) {
		t.Fatalf("bytes outside the replaced contents changed")
	}
}

// contentSpan finds the replaced value at l, independently of the pruner: a tool_result
// block's content, a Responses item's output, a Chat message's content.
func contentSpan(t testing.TB, body []byte, l Location) (int, int) {
	t.Helper()
	array, field := "messages", "content"
	if l.Section == SectionInput {
		array, field = "input", "output"
	}
	member := func(o jsonscan.Object, name string) (int, int, int, bool) {
		for o.Next() {
			if o.KeyIs(name) {
				end, _ := jsonscan.SkipValue(body, o.Value(), o.Depth())
				return o.Value(), end, o.Depth(), true
			}
		}
		return 0, 0, 0, false
	}
	element := func(start, depth, n int) (int, int, bool) {
		a, _ := jsonscan.OpenArray(body, start, depth)
		for a.Next() {
			if a.Index() == n {
				return a.Value(), a.Depth(), true
			}
		}
		return 0, 0, false
	}
	top, _ := jsonscan.OpenObject(body, jsonscan.SkipSpace(body, 0), 0)
	if v, _, depth, ok := member(top, array); ok {
		if item, depth, ok := element(v, depth, l.Index); ok {
			o, _ := jsonscan.OpenObject(body, item, depth)
			if v, end, depth, ok := member(o, field); ok {
				if l.Section != SectionMessages {
					return v, end
				}
				if b, depth, ok := element(v, depth, l.Block); ok {
					o, _ := jsonscan.OpenObject(body, b, depth)
					if v, end, _, ok := member(o, "content"); ok {
						return v, end
					}
				}
			}
		}
	}
	t.Fatalf("no content at %s", l)
	return 0, 0
}

func TestPruneInvalidJSON(t *testing.T) {
	body := []byte(`{"messages":[`)
	if out, _, err := Prune(body, PruneOptions{}); !errors.Is(err, ErrInvalidJSON) || &out[0] != &body[0] {
		t.Fatalf("invalid JSON: %v", err)
	}
}

func TestPruneMinBytes(t *testing.T) {
	body := readFixture(t, "testdata/prune/repeated.json")
	// With a 1-byte minimum, the repeated 4-byte "done" is still kept: its reference would be
	// longer than it.
	_, res, err := Prune(body, PruneOptions{MinBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pruned != 2 {
		t.Fatalf("pruned %d", res.Pruned)
	}
	// With a huge minimum nothing is pruned and the body is returned as is.
	out, res, _ := Prune(body, PruneOptions{MinBytes: 1 << 20})
	if res.Pruned != 0 || &out[0] != &body[0] {
		t.Fatalf("pruned %d", res.Pruned)
	}
}

// conversation builds an agent loop of n turns in which every other tool result repeats.
func conversation(n int, payload string) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"go"}`)
	for i := range n {
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"bash","input":{"cmd":"make"}}]}`, i)
		out := payload
		if i%2 == 1 {
			out = fmt.Sprintf("%s (run %d)", payload, i)
		}
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q}]}`, i, out)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func TestPruneIsPrefixStable(t *testing.T) {
	payload := strings.Repeat("build output line\n", 40)
	var prev []any
	for n := 1; n <= 8; n++ {
		out, res, err := Prune(conversation(n, payload), PruneOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var req struct{ Messages []any }
		if err := json.Unmarshal(out, &req); err != nil {
			t.Fatal(err)
		}
		if prev != nil && !reflect.DeepEqual(req.Messages[:len(prev)], prev) {
			t.Fatalf("turn %d: the pruned history differs from the previous request's", n)
		}
		if want := (n - 1) / 2; res.Pruned != want {
			t.Fatalf("turn %d: pruned %d, want %d", n, res.Pruned, want)
		}
		prev = req.Messages
	}
}
