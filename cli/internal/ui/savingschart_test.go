package ui

import (
	"testing"

	"github.com/agent-rewind/rewind/gateway"
)

// TestSavingsChart: points are placed by time (a gap of hours stays a gap), scaled so the
// largest total reaches the top; calls are drawn when nothing was priced; no history, no chart.
func TestSavingsChart(t *testing.T) {
	if c := savingsChart(nil); c != nil {
		t.Fatalf("chart of no history: %+v", c)
	}
	c := savingsChart([]gateway.SavingsPoint{
		{Hour: "2026-11-30T10:00:00Z", ReplayedCalls: 1, AvoidedCostUSD: 0.5},
		{Hour: "2026-11-30T11:00:00Z", ReplayedCalls: 2, AvoidedCostUSD: 1},
		{Hour: "2026-11-30T20:00:00Z", ReplayedCalls: 8, AvoidedCostUSD: 2},
	})
	if c == nil || c.Series != "avoided_cost_usd" || c.Max != 2 || c.Samples != 3 || c.From != "2026-11-30T10:00:00Z" || c.To != "2026-11-30T20:00:00Z" {
		t.Fatalf("chart %+v", c)
	}
	// x: 70 + 550*h/10; y: 190 - 176*v/2.
	if want := "70.0,146.0 125.0,102.0 620.0,14.0"; c.Points != want {
		t.Fatalf("points %q, want %q", c.Points, want)
	}
	calls := savingsChart([]gateway.SavingsPoint{{Hour: "2026-11-30T10:00:00Z", ReplayedCalls: 4}})
	if calls.Series != "replayed_calls" || calls.Max != 4 || calls.Points != "345.0,14.0" {
		t.Fatalf("one unpriced point: %+v", calls)
	}
}
