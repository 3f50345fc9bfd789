package bench

import (
	"math"
	"slices"
	"time"
)

// Median returns the median of xs (the mean of the two middle values for
// an even count), or 0 for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, or 0 for none: the smallest value with at least p% of the values
// at or below it.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// Ratio returns a/b, or 0 when b is 0 (a figure that could not be measured).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// PairedRatios returns the median of a[i]/b[i]: ratios paired within each
// repetition cancel drift between repetitions.
func PairedRatios(a, b []float64) float64 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	rs := make([]float64, 0, n)
	for i, x := range a {
		if b[i] != 0 {
			rs = append(rs, x/b[i])
		}
	}
	return Median(rs)
}

// PairedDiffs returns the median of a[i]-b[i].
func PairedDiffs(a, b []float64) float64 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	ds := make([]float64, n)
	for i, x := range a {
		ds[i] = x - b[i]
	}
	return Median(ds)
}

// ms converts a duration to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Latency is the p50/p99 of samples (sorted in place).
func Latency(samples []time.Duration) LatencyStat {
	slices.Sort(samples)
	return LatencyStat{P50Ms: ms(Percentile(samples, 50)), P99Ms: ms(Percentile(samples, 99)), Samples: len(samples)}
}
