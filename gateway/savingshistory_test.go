package gateway

import (
	"encoding/json"
	"testing"
	"time"
)

// TestSavingsHistory: one point per hour holding the totals, the same hour updated in place,
// bounded; a receipt from before history reads, and a history no gateway writes is refused.
func TestSavingsHistory(t *testing.T) {
	s := emptySavings()
	t0 := time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC)
	s.ReplayedCalls, s.AvoidedCostUSD = 1, 0.5
	s.mark(t0)
	s.ReplayedCalls, s.AvoidedCostUSD = 2, 1
	s.mark(t0.Add(40 * time.Minute)) // same hour: replaces
	s.ReplayedCalls, s.AvoidedCostUSD = 5, 2
	s.mark(t0.Add(3 * time.Hour))
	want := []SavingsPoint{{"2026-11-30T12:00:00Z", 2, 1}, {"2026-11-30T15:00:00Z", 5, 2}}
	if len(s.History) != 2 || s.History[0] != want[0] || s.History[1] != want[1] {
		t.Fatalf("history %+v, want %+v", s.History, want)
	}
	for i := range maxSavingsHistory + 10 {
		s.mark(t0.Add(time.Duration(4+i) * time.Hour))
	}
	if len(s.History) != maxSavingsHistory || s.History[len(s.History)-1].Hour != t0.Add(time.Duration(maxSavingsHistory+13)*time.Hour).Truncate(time.Hour).Format(time.RFC3339) {
		t.Fatalf("history of %d points ending %v, want %d ending at the newest hour", len(s.History), s.History[len(s.History)-1], maxSavingsHistory)
	}
	b, _ := json.Marshal(s)
	if back, err := parseSavings(b); err != nil || len(back.History) != maxSavingsHistory {
		t.Fatalf("round trip: %d points, %v", len(back.History), err)
	}

	old := []byte(`{"kind":"agent-rewind/savings/v1","replayed_calls":3,"avoided_cost_usd":0.1,"by_model":{}}`)
	if s, err := parseSavings(old); err != nil || s.ReplayedCalls != 3 || s.History != nil {
		t.Fatalf("a receipt without history: %+v, %v", s, err)
	}
	for _, bad := range []string{
		`[{"hour":"2026-11-30T12:30:00Z","replayed_calls":1}]`,
		`[{"hour":"2026-11-30T13:00:00Z","replayed_calls":1},{"hour":"2026-11-30T12:00:00Z","replayed_calls":2}]`,
		`[{"hour":"yesterday","replayed_calls":1}]`,
		`[{"hour":"2026-11-30T12:00:00Z","replayed_calls":-1}]`,
	} {
		if _, err := parseSavings([]byte(`{"kind":"agent-rewind/savings/v1","history":` + bad + `}`)); err == nil {
			t.Errorf("history %s accepted", bad)
		}
	}
}
