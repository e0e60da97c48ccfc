package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/tools/bench/measure"
	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// The nine-call suite (issue 9, suite 1): the nine recorded Anthropic Messages calls of
// testdata/nine-call/ sent in order through the real gateway to the mock upstream. In the
// "repeats" corpus three calls are exact repeats: the gateway should answer them from memory,
// replaying 3 of 9. The "unique" corpus must replay exactly 0 of 9.
//
// A call counts as replayed when the mock upstream did not see it (its hit counter did not
// move). The savings are simulated: each call's recorded usage priced with
// testdata/nine-call/prices.json, the replayed calls' cost over the cost of all nine. They are
// not provider billing and not a general savings estimate.
func init() {
	register(Suite{
		Name:        "nine-call",
		Description: "nine Anthropic calls (3 exact repeats) through agent-rewind gateway to a mock upstream: replayed of 9, simulated savings; unique-calls variant must replay 0",
		Modules:     []string{"gateway", "cli"},
		Run:         runNineCall,
	})
}

// prices is testdata/nine-call/prices.json: USD per million tokens by model.
type prices struct {
	Source string `json:"source"`
	Date   string `json:"date"`
	Models map[string]struct {
		Input        float64 `json:"input"`
		CacheWrite5m float64 `json:"cache_write_5m"`
		CacheWrite1h float64 `json:"cache_write_1h"`
		CacheRead    float64 `json:"cache_read"`
		Output       float64 `json:"output"`
	} `json:"models"`
}

// cost prices one response's usage in USD. Cache writes are split by TTL where the usage says
// how (cache_creation), and priced at the 5-minute rate otherwise.
func (p prices) cost(message []byte) (float64, error) {
	var m struct {
		Model string `json:"model"`
		Usage struct {
			Input         float64 `json:"input_tokens"`
			Output        float64 `json:"output_tokens"`
			CacheCreate   float64 `json:"cache_creation_input_tokens"`
			CacheRead     float64 `json:"cache_read_input_tokens"`
			CacheCreation *struct {
				M5 float64 `json:"ephemeral_5m_input_tokens"`
				H1 float64 `json:"ephemeral_1h_input_tokens"`
			} `json:"cache_creation"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(message, &m); err != nil {
		return 0, err
	}
	pr, ok := p.Models[m.Model]
	if !ok {
		return 0, fmt.Errorf("model %q has no price in prices.json", m.Model)
	}
	u := m.Usage
	write := u.CacheCreate * pr.CacheWrite5m
	if c := u.CacheCreation; c != nil {
		write = c.M5*pr.CacheWrite5m + c.H1*pr.CacheWrite1h
	}
	return (u.Input*pr.Input + write + u.CacheRead*pr.CacheRead + u.Output*pr.Output) / 1e6, nil
}

func runNineCall(ctx context.Context, b *Bench) error {
	agent, err := b.Agent(ctx)
	if err != nil {
		return err
	}
	if err := agent.Require(ctx, b, []string{"gateway"}); err != nil {
		return err
	}
	b.UsesModules("tools")
	pp, err := b.InputFile("nine-call/prices.json")
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(pp)
	if err != nil {
		return err
	}
	var pr prices
	if err := json.Unmarshal(raw, &pr); err != nil {
		return fmt.Errorf("nine-call/prices.json: %w", err)
	}
	for _, v := range []struct {
		dir, prefix string
		want        int64
	}{{"repeats", "nine_call", 3}, {"unique", "nine_call_unique", 0}} {
		replayed, avoided, total, receipt, err := nineCalls(ctx, b, agent, v.dir, pr)
		if err != nil {
			return fmt.Errorf("%s: %w", v.dir, err)
		}
		note := "simulated from recorded usage: not provider billing, not a general savings estimate"
		if receipt != "" {
			note += "; the gateway's own receipt: " + receipt
		}
		b.Count(v.prefix+"_replayed", replayed, 9, "calls", fmt.Sprintf("calls sent through the gateway (testdata/nine-call/%s)", v.dir), Exactly(float64(v.want)), "")
		goal := NoGoal
		if v.want == 0 {
			goal = Exactly(0)
		}
		b.Value(v.prefix+"_simulated_savings", 100*avoided/total, "% (simulated)",
			fmt.Sprintf("cost of all nine calls, $%.6f, priced with prices.json (%s)", total, pr.Date), nil, goal, note)
	}
	return nil
}

// nineCalls sends one corpus folder's nine calls through a fresh gateway and returns how many
// were replayed (never reached the upstream), the simulated cost avoided and the total, and the
// gateway's own savings receipt ("agent-rewind --json savings", read after the gateway
// stopped, and checked against the mock's count and prices.json) where it has one.
func nineCalls(ctx context.Context, b *Bench, agent *Agent, dir string, pr prices) (replayed int64, avoided, total float64, receipt string, err error) {
	mock := mockanthropic.New(mockanthropic.Options{})
	for i := 1; i <= 9; i++ {
		for _, kind := range []string{"request", "response"} {
			if _, err := b.InputFile(fmt.Sprintf("nine-call/%s/%02d.%s.json", dir, i, kind)); err != nil {
				return 0, 0, 0, "", err
			}
		}
	}
	base := filepath.Join(b.Root(), "tools", "bench", "testdata", "nine-call", dir)
	if _, err := mock.LoadDir(base); err != nil {
		return 0, 0, 0, "", err
	}
	if err := mock.Start(); err != nil {
		return 0, 0, 0, "", err
	}
	defer mock.Close()
	ws, err := b.TempDir("nine-call-" + dir)
	if err != nil {
		return 0, 0, 0, "", err
	}
	gw, err := startGateway(ctx, agent, ws, mock.URL)
	if err != nil {
		return 0, 0, 0, "", err
	}
	stopped := false
	defer func() {
		if !stopped {
			gw.stop()
		}
	}()
	client := newBenchClient()
	for i := 1; i <= 9; i++ {
		req, err := os.ReadFile(filepath.Join(base, fmt.Sprintf("%02d.request.json", i)))
		if err != nil {
			return 0, 0, 0, "", err
		}
		resp, err := os.ReadFile(filepath.Join(base, fmt.Sprintf("%02d.response.json", i)))
		if err != nil {
			return 0, 0, 0, "", err
		}
		c, err := pr.cost(resp)
		if err != nil {
			return 0, 0, 0, "", fmt.Errorf("call %d: %w", i, err)
		}
		total += c
		before := mock.Hits()
		x, err := postMessages(ctx, client, gw.URL, req)
		if err != nil {
			return 0, 0, 0, "", fmt.Errorf("call %d: %w", i, err)
		}
		var fields struct {
			Stream bool `json:"stream"`
		}
		if err := json.Unmarshal(req, &fields); err != nil {
			return 0, 0, 0, "", fmt.Errorf("call %d: %w", i, err)
		}
		if fields.Stream && !streamComplete(x.Body) {
			return 0, 0, 0, "", fmt.Errorf("call %d: the stream ended without message_stop", i)
		}
		if mock.Hits() == before {
			replayed++
			avoided += c
		}
	}
	// The gateway writes its receipt in the background and when it stops: stop it first.
	gw.stop()
	stopped = true
	if agent.Has(ctx, "savings") {
		r, err := measure.Run(agent.Command(ctx, ws, "--json", "savings"))
		if err != nil {
			return 0, 0, 0, "", fmt.Errorf("agent-rewind savings: %w", err)
		}
		var rec struct {
			ReplayedCalls  int64   `json:"replayed_calls"`
			AvoidedCostUSD float64 `json:"avoided_cost_usd"`
			Note           string  `json:"note"`
		}
		if err := json.Unmarshal(r.Stdout, &rec); err != nil {
			return 0, 0, 0, "", fmt.Errorf("agent-rewind --json savings printed no receipt: %v: %s", err, tail(string(r.Stdout), 300))
		}
		// The receipt must agree with what the mock upstream saw, and price the replayed
		// calls as prices.json does (the gateway's own test keeps the two tables equal).
		if rec.ReplayedCalls != replayed {
			return 0, 0, 0, "", fmt.Errorf("the gateway's receipt counts %d replayed calls, but %d calls never reached the upstream", rec.ReplayedCalls, replayed)
		}
		if d := rec.AvoidedCostUSD - avoided; d > 1e-9 || d < -1e-9 {
			return 0, 0, 0, "", fmt.Errorf("the gateway's receipt says $%.9f avoided, prices.json gives $%.9f for the same calls", rec.AvoidedCostUSD, avoided)
		}
		receipt = fmt.Sprintf("%d replayed calls, $%.6f avoided (%s)", rec.ReplayedCalls, rec.AvoidedCostUSD, rec.Note)
	}
	return replayed, avoided, total, receipt, nil
}
