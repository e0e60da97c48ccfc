package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/gateway"
)

// SavingsChart is the savings over time, laid out for an SVG line chart: the page only draws
// it. X is time (hours apart stay apart: a quiet day is a flat stretch, not skipped), Y the
// running total of avoided cost, or of replayed calls when nothing was priced.
type SavingsChart struct {
	Width   int     `json:"width"`
	Height  int     `json:"height"`
	Series  string  `json:"series"` // "avoided_cost_usd" or "replayed_calls"
	Max     float64 `json:"max"`    // the Y axis's top value
	Points  string  `json:"points"` // the polyline's points, "x,y x,y …", in chart pixels
	From    string  `json:"from"`   // the first point's hour (RFC 3339)
	To      string  `json:"to"`     // the last point's hour
	Samples int     `json:"samples"`
}

// The plot's size and the margin left for the axis labels, in pixels.
const (
	chartW, chartH       = 640, 220
	chartLeft, chartBase = 70, 190
	chartTop, chartRight = 14, 620
)

// savingsChart lays out a receipt's history; nil when there is none (a receipt from before
// history, or nothing replayed yet).
func savingsChart(hist []gateway.SavingsPoint) *SavingsChart {
	type pt struct {
		t time.Time
		v float64
	}
	cost := false
	for _, p := range hist {
		cost = cost || p.AvoidedCostUSD > 0
	}
	var pts []pt
	for _, p := range hist {
		t, err := time.Parse(time.RFC3339, p.Hour)
		if err != nil {
			continue // LoadSavings checked the hours; a bad one is simply not drawn
		}
		v := float64(p.ReplayedCalls)
		if cost {
			v = p.AvoidedCostUSD
		}
		pts = append(pts, pt{t, v})
	}
	if len(pts) == 0 {
		return nil
	}
	c := &SavingsChart{Width: chartW, Height: chartH, Series: "replayed_calls", Samples: len(pts),
		From: pts[0].t.UTC().Format(time.RFC3339), To: pts[len(pts)-1].t.UTC().Format(time.RFC3339)}
	if cost {
		c.Series = "avoided_cost_usd"
	}
	for _, p := range pts {
		c.Max = max(c.Max, p.v)
	}
	if c.Max == 0 {
		c.Max = 1
	}
	span := pts[len(pts)-1].t.Sub(pts[0].t)
	var b strings.Builder
	for i, p := range pts {
		x := float64(chartLeft+chartRight) / 2 // one point: in the middle
		if span > 0 {
			x = chartLeft + float64(chartRight-chartLeft)*float64(p.t.Sub(pts[0].t))/float64(span)
		}
		y := chartBase - float64(chartBase-chartTop)*p.v/c.Max
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", x, y)
	}
	c.Points = b.String()
	return c
}
