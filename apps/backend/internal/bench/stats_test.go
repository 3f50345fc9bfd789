package bench

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{2, 2, 9, 2}, 2},
	}
	for _, c := range cases {
		in := append([]float64(nil), c.in...)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v): got %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Fatalf("Median modified its input: got %v, want %v", in, c.in)
			}
		}
	}
}

func TestPercentile(t *testing.T) {
	var xs []time.Duration
	for i := 1; i <= 100; i++ {
		xs = append(xs, time.Duration(i))
	}
	cases := []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{[]time.Duration{7}, 99, 7},
		{xs, 50, 50},
		{xs, 99, 99},
		{xs, 100, 100},
		{xs, 1, 1},
		{xs, 0.1, 1},
		{xs[:10], 99, 10}, // nearest rank: ceil(9.9) = 10th value
		{xs[:10], 50, 5},
	}
	for _, c := range cases {
		if got := Percentile(c.in, c.p); got != c.want {
			t.Errorf("Percentile(%d values, %v): got %v, want %v", len(c.in), c.p, got, c.want)
		}
	}
}

func TestPairedRatiosAndDiffs(t *testing.T) {
	a := []float64{10, 30, 20, 99}
	b := []float64{5, 10, 10}
	// Pairs (10,5) (30,10) (20,10): ratios 2, 3, 2 -> median 2; the unpaired 99 is ignored.
	if got := PairedRatios(a, b); got != 2 {
		t.Errorf("PairedRatios: got %v, want 2", got)
	}
	// Differences 5, 20, 10 -> median 10.
	if got := PairedDiffs(a, b); got != 10 {
		t.Errorf("PairedDiffs: got %v, want 10", got)
	}
	// A zero denominator is skipped, not a division by zero.
	if got := PairedRatios([]float64{4, 6}, []float64{0, 2}); got != 3 {
		t.Errorf("PairedRatios with a zero: got %v, want 3", got)
	}
	if got := Ratio(1, 0); got != 0 {
		t.Errorf("Ratio(1, 0): got %v, want 0", got)
	}
}

func TestLoadStat(t *testing.T) {
	runs := []loadRun{
		{calls: 100, errors: 1, elapsed: time.Second, lat: durations(1, 100)},
		{calls: 300, elapsed: time.Second, lat: durations(2, 300)},
		{calls: 200, elapsed: time.Second, lat: durations(3, 200)},
	}
	st := loadStat(runs)
	if st.CallsPerSec != 200 || st.Calls != 600 || st.Errors != 1 {
		t.Errorf("loadStat: got %+v, want 200 calls/s, 600 calls, 1 error", st)
	}
	if st.P50Ms != 2 { // per-run p50s are 1, 2 and 3 ms
		t.Errorf("loadStat p50: got %v ms, want 2", st.P50Ms)
	}
}

// durations returns n copies of ms milliseconds.
func durations(ms, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(ms) * time.Millisecond
	}
	return out
}
