package gateway

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

func TestStreamUsage(t *testing.T) {
	sse, err := mockanthropic.SSE([]byte(recordedMessage))
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{Input: 120, Output: 40, CacheRead: 5000, CacheWrite: 1000, CacheWrite5m: 1000, CacheWriteSplit: true}
	for name, body := range map[string][]byte{
		"lf":   sse,
		"crlf": bytes.ReplaceAll(sse, []byte("\n"), []byte("\r\n")),
		"cr":   bytes.ReplaceAll(sse, []byte("\n"), []byte("\r")),
	} {
		model, u, complete := StreamUsage(body)
		if model != "claude-sonnet-5-5" || u != want || !complete {
			t.Errorf("%s: %q %+v complete %v", name, model, u, complete)
		}
	}
	for name, body := range map[string][]byte{
		"cut before message_stop": sse[:bytes.Index(sse, []byte("event: message_stop"))],
		"unterminated last event": bytes.TrimSuffix(sse, []byte("\n\n")),
		"error after stop":        append(append([]byte{}, sse...), "event: error\ndata: {\"type\":\"error\"}\n\n"...),
		"no message_start":        []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"),
	} {
		if _, _, complete := StreamUsage(body); complete {
			t.Errorf("%s: complete", name)
		}
	}
	// Nameless events fall back to the data's type.
	nameless := []byte("data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n: comment\ndata: {\"type\":\"message_stop\"}\n\n")
	if model, u, complete := StreamUsage(nameless); model != "m" || u.Input != 3 || !complete {
		t.Errorf("nameless: %q %+v %v", model, u, complete)
	}
}

func TestMessageUsage(t *testing.T) {
	model, u, ok := MessageUsage([]byte(recordedMessage))
	if !ok || model != "claude-sonnet-5-5" || u.Input != 120 || u.CacheWrite1h != 0 || !u.CacheWriteSplit {
		t.Errorf("%q %+v %v", model, u, ok)
	}
	for _, body := range []string{`{"type":"error"}`, `{"type":"message"}`, `not json`, `{"type":"message","usage":{"input_tokens":1.5}}`} {
		if _, _, ok := MessageUsage([]byte(body)); ok {
			t.Errorf("%s: accepted", body)
		}
	}
	_, u, _ = MessageUsage([]byte(`{"type":"message","usage":{"input_tokens":-5,"output_tokens":2}}`))
	if u.Input != 0 || u.Output != 2 {
		t.Errorf("negative count: %+v", u)
	}
}

func TestPrices(t *testing.T) {
	for model, want := range map[string]bool{
		"claude-sonnet-5-5": true, "claude-sonnet-4-5-20250929": true, "claude-sonnet-5-5[1m]": true,
		"claude-opus-4-9": false, "claude-sonnet-5-5-latest": false, "gpt-9": false, "": false,
	} {
		if _, ok := DefaultPrices.Lookup(model); ok != want {
			t.Errorf("Lookup(%q) = %v", model, ok)
		}
	}
	p := DefaultPrices["claude-sonnet-5-5"]
	u := Usage{Input: 1e6, Output: 1e6, CacheRead: 1e6, CacheWrite: 2e6}
	if got := p.Cost(u); math.Abs(got-(2+10+0.1+2*2.5)) > 1e-9 {
		t.Errorf("cost without a split: %f", got)
	}
	u.CacheWriteSplit, u.CacheWrite5m, u.CacheWrite1h = true, 1e6, 1e6
	if got := p.Cost(u); math.Abs(got-(2+10+0.1+2.5+4)) > 1e-9 {
		t.Errorf("cost with a split: %f", got)
	}
}

// TestPricesAgreeWithBench keeps the nine-call suite's price table in step with this one.
func TestPricesAgreeWithBench(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "tools", "bench", "testdata", "nine-call", "prices.json"))
	if err != nil {
		t.Skipf("no bench price table beside this module: %v", err)
	}
	var bench struct {
		Date   string           `json:"date"`
		Models map[string]Price `json:"models"`
	}
	if err := json.Unmarshal(data, &bench); err != nil {
		t.Fatal(err)
	}
	for model, bp := range bench.Models {
		if p, ok := DefaultPrices.Lookup(model); !ok || p != bp {
			t.Errorf("%s: bench %+v, gateway %+v", model, bp, p)
		}
	}
	if bench.Date != PriceDate {
		t.Errorf("bench prices of %s, gateway prices of %s", bench.Date, PriceDate)
	}
}

func TestLoadSavings(t *testing.T) {
	dir := t.TempDir()
	s, err := LoadSavings(filepath.Join(dir, "none.json"))
	if err != nil || s.ReplayedCalls != 0 || s.Note != SavingsNote || s.Kind != SavingsKind {
		t.Errorf("missing file: %+v %v", s, err)
	}
	for name, content := range map[string]string{
		"not json":   "{",
		"other kind": `{"kind":"something/else"}`,
		"negative":   `{"kind":"agent-rewind/savings/v1","replayed_calls":-1}`,
		"trailing":   `{"kind":"agent-rewind/savings/v1"} {}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(p, []byte(content), 0o600)
		if _, err := LoadSavings(p); err == nil || !strings.Contains(err.Error(), "savings receipt unreadable") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestLedgersAddUp: two ledgers on one receipt (two gateway processes in one workspace)
// add up, because each write reads, adds and replaces under the lock.
func TestLedgersAddUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), SavingsFileName)
	logf := func(string, ...any) {}
	info := PriceInfo{Source: PriceSource, Date: PriceDate}
	a := newLedger(path, nil, DefaultPrices, info, nil, logf)
	b := newLedger(path, nil, DefaultPrices, info, nil, logf)
	var wg sync.WaitGroup
	for _, l := range []*ledger{a, b} {
		wg.Go(func() {
			for i := range 200 {
				l.add("claude-haiku-4-5", Usage{Input: 1, Output: 2})
				if i%50 == 0 {
					if err := l.flush(); err != nil {
						t.Error(err)
					}
				}
			}
			l.add("unknown-model", Usage{Output: 1})
		})
	}
	wg.Wait()
	if err := errors2(a.close(), b.close()); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSavings(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.ReplayedCalls != 402 || s.AvoidedTokens.Output != 802 || s.UnpricedCalls != 2 || s.ByModel["unknown-model"].Priced {
		t.Errorf("%+v", s)
	}
	if want := 400 * (1*1.0 + 2*5.0) / 1e6; math.Abs(s.AvoidedCostUSD-want) > 1e-12 {
		t.Errorf("cost %g, want %g", s.AvoidedCostUSD, want)
	}
}

func errors2(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
