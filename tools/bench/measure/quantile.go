package measure

import (
	"math"
	"slices"
	"time"
)

// Quantile returns the p-quantile (0 ≤ p ≤ 1) of xs by linear interpolation between the closest
// ranks (type 7). It returns NaN for an empty slice; xs is not modified.
func Quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return quantileSorted(s, p)
}

// quantileSorted is Quantile on an already sorted slice.
func quantileSorted(s []float64, p float64) float64 {
	p = min(max(p, 0), 1)
	h := float64(len(s)-1) * p
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Median returns the median of xs (Quantile 0.5): for an even count, the mean of the middle two.
func Median(xs []float64) float64 { return Quantile(xs, 0.5) }

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of ds, as used for per-call latencies
// (p50, p99). It returns 0 for an empty slice.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(math.Round(Quantile(xs, p/100)))
}
