package gateway

import (
	"errors"
	"math"
	"time"
)

// maxSavingsHistory bounds a receipt's history: 30 days of hourly points, a few tens of
// kilobytes, so the receipt stays small however long a workspace lives.
const maxSavingsHistory = 720

// SavingsPoint is the receipt's running totals as of the end of one hour (UTC): the history
// a chart over time draws. Totals, not increments, so a lost or dropped point loses no count.
type SavingsPoint struct {
	// Hour is the hour's start, RFC 3339 UTC ("2026-11-30T12:00:00Z").
	Hour           string  `json:"hour"`
	ReplayedCalls  int64   `json:"replayed_calls"`
	AvoidedCostUSD float64 `json:"avoided_cost_usd"`
}

// mark records the receipt's current totals as the point of now's hour: it replaces the last
// point when that is the same hour, else appends one, dropping the oldest beyond the cap.
func (s *Savings) mark(now time.Time) {
	p := SavingsPoint{Hour: now.UTC().Truncate(time.Hour).Format(time.RFC3339), ReplayedCalls: s.ReplayedCalls, AvoidedCostUSD: s.AvoidedCostUSD}
	if n := len(s.History); n > 0 && s.History[n-1].Hour == p.Hour {
		s.History[n-1] = p
		return
	}
	s.History = append(s.History, p)
	if over := len(s.History) - maxSavingsHistory; over > 0 {
		s.History = append([]SavingsPoint(nil), s.History[over:]...)
	}
}

// checkHistory refuses a history a gateway cannot have written: hours not in increasing order
// or not hours, negative or non-finite totals. A longer history than the cap keeps its newest.
func (s *Savings) checkHistory() error {
	var last time.Time
	for _, p := range s.History {
		t, err := time.Parse(time.RFC3339, p.Hour)
		if err != nil || !t.Equal(t.Truncate(time.Hour)) || (!last.IsZero() && !t.After(last)) {
			return errors.New("a history point whose hour is not a whole hour after the one before it")
		}
		if p.ReplayedCalls < 0 || p.AvoidedCostUSD < 0 || math.IsNaN(p.AvoidedCostUSD) || math.IsInf(p.AvoidedCostUSD, 0) {
			return errors.New("a history point with a negative or non-finite count")
		}
		last = t
	}
	if over := len(s.History) - maxSavingsHistory; over > 0 {
		s.History = s.History[over:]
	}
	return nil
}
