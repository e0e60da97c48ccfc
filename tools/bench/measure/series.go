package measure

import (
	"math"
	"slices"
	"time"
)

// Sample is one timed run of one arm.
type Sample struct {
	Wall    time.Duration // wall-clock time of the timed part
	MaxRSS  int64         // peak resident set in bytes, for a child process; 0 when not measured
	Elapsed time.Duration // optional: a second time inside the run (for example time to first byte)
}

// Series is every sample of one arm, in the order they were taken.
type Series struct {
	Name    string
	Samples []Sample
}

// Walls returns the wall times of s in order.
func (s Series) Walls() []time.Duration {
	out := make([]time.Duration, len(s.Samples))
	for i, x := range s.Samples {
		out[i] = x.Wall
	}
	return out
}

// MedianWall returns the median wall time of s.
func (s Series) MedianWall() time.Duration {
	return Percentile(s.Walls(), 50)
}

// PeakRSS returns the largest MaxRSS of s in bytes (0 when none was measured).
func (s Series) PeakRSS() int64 {
	var m int64
	for _, x := range s.Samples {
		m = max(m, x.MaxRSS)
	}
	return m
}

// Stats summarises s: its median and spread in milliseconds, and its peak RSS.
func (s Series) Stats() Stats { return Summarize(s.Walls(), s.PeakRSS()) }

// Stats is the JSON summary of a set of timings: count, median, min–max and interquartile range
// in milliseconds, and the peak resident set in MiB where a child process was measured.
type Stats struct {
	N          int     `json:"n"`
	MedianMS   float64 `json:"median_ms"`
	MinMS      float64 `json:"min_ms"`
	MaxMS      float64 `json:"max_ms"`
	P25MS      float64 `json:"p25_ms"`
	P75MS      float64 `json:"p75_ms"`
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
}

// Summarize returns the Stats of the durations ds and a peak RSS in bytes (0 for none).
func Summarize(ds []time.Duration, peakRSS int64) Stats {
	st := Stats{N: len(ds), PeakRSSMiB: round(float64(peakRSS)/(1<<20), 1)}
	if len(ds) == 0 {
		return st
	}
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d) / float64(time.Millisecond)
	}
	slices.Sort(xs)
	st.MedianMS = round(quantileSorted(xs, 0.5), 4)
	st.MinMS = round(xs[0], 4)
	st.MaxMS = round(xs[len(xs)-1], 4)
	st.P25MS = round(quantileSorted(xs, 0.25), 4)
	st.P75MS = round(quantileSorted(xs, 0.75), 4)
	return st
}

// Ratio returns median(a) / median(b): how many times b's time a takes.
func Ratio(a, b Series) float64 {
	mb := b.MedianWall()
	if mb <= 0 {
		return math.NaN()
	}
	return float64(a.MedianWall()) / float64(mb)
}

// round rounds x to d decimal places, so artifacts do not carry meaningless digits.
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}
