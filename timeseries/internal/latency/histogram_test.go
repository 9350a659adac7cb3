package latency

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Quantiles are the quantiles every accuracy test checks.
var quantiles = []float64{0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 1}

// logNormal draws n durations whose logarithm is normal around the log
// of median with deviation sigma.
func logNormal(rng *rand.Rand, n int, median time.Duration, sigma float64) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(float64(median) * math.Exp(sigma*rng.NormFloat64()))
	}
	return out
}

// distributions are the sample sets of the accuracy tests, each drawn
// from its own fixed seed.
var distributions = []struct {
	name string
	draw func(n int) []time.Duration
}{
	{"log-normal 20ms σ=1", func(n int) []time.Duration {
		return logNormal(rand.New(rand.NewPCG(20, 1)), n, 20*time.Millisecond, 1)
	}},
	{"uniform 100µs..2s", func(n int) []time.Duration {
		rng := rand.New(rand.NewPCG(2, 3))
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = 100*time.Microsecond + time.Duration(rng.Int64N(int64(2*time.Second-100*time.Microsecond)))
		}
		return out
	}},
	{"bimodal 2ms and 800ms", func(n int) []time.Duration {
		rng := rand.New(rand.NewPCG(4, 5))
		fast := logNormal(rng, n*9/10, 2*time.Millisecond, 0.3)
		return append(fast, logNormal(rng, n-len(fast), 800*time.Millisecond, 0.5)...)
	}},
	{"constant 7ms", func(n int) []time.Duration {
		return slices.Repeat([]time.Duration{7 * time.Millisecond}, n)
	}},
}

// exactQuantile is the q-quantile of sorted in the convention of Rank.
func exactQuantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[Rank(q, uint64(len(sorted)))-1]
}

func histogramOf(m *Mapping, ds []time.Duration) *Histogram {
	h := NewHistogram(m)
	for _, d := range ds {
		h.Add(d)
	}
	return h
}

func sortedCopy(ds []time.Duration) []time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s
}

// checkQuantiles fails t for every quantile of h not within alpha of the
// exact one of sorted, and returns the largest relative error.
func checkQuantiles(t *testing.T, h *Histogram, sorted []time.Duration, alpha float64) float64 {
	t.Helper()
	worst := 0.0
	for _, q := range quantiles {
		est, exact := h.Quantile(q), exactQuantile(sorted, q)
		if !within(est, exact, alpha) {
			t.Errorf("q=%g: estimate %v, exact %v: relative error %.5f > %g", q, est, exact, relErr(est, exact), alpha)
		}
		worst = max(worst, relErr(est, exact))
	}
	return worst
}

func TestQuantileAccuracy(t *testing.T) {
	const n = 100_000
	for _, alpha := range []float64{0.01, 0.02, 0.05} {
		m := mustMapping(t, Config{Accuracy: alpha})
		worst := 0.0
		for _, dist := range distributions {
			t.Run(fmt.Sprintf("α=%g/%s", alpha, dist.name), func(t *testing.T) {
				ds := dist.draw(n)
				h := histogramOf(m, ds)
				worst = max(worst, checkQuantiles(t, h, sortedCopy(ds), alpha))
			})
		}
		t.Logf("α=%g: largest relative error %.5f", alpha, worst)
	}
}

func TestHistogramStats(t *testing.T) {
	m := mustMapping(t, Config{})
	h := NewHistogram(m)
	if h.Count() != 0 || h.Sum() != 0 || h.Min() != 0 || h.Max() != 0 || h.Mean() != 0 || h.Quantile(0.5) != 0 {
		t.Errorf("empty: count %d sum %v min %v max %v mean %v p50 %v", h.Count(), h.Sum(), h.Min(), h.Max(), h.Mean(), h.Quantile(0.5))
	}
	for _, d := range []time.Duration{3 * time.Millisecond, time.Millisecond, 8 * time.Millisecond, -time.Second} {
		h.Add(d)
	}
	if h.Count() != 4 || h.Sum() != 12*time.Millisecond || h.Min() != 0 || h.Max() != 8*time.Millisecond || h.Mean() != 3*time.Millisecond {
		t.Errorf("count %d sum %v min %v max %v mean %v; want 4 12ms 0s 8ms 3ms", h.Count(), h.Sum(), h.Min(), h.Max(), h.Mean())
	}
	if h.Bin(Underflow) != 1 || h.Bin(m.Index(time.Millisecond)) != 1 {
		t.Errorf("negative duration not counted as 0 in the underflow bin")
	}
	h.Reset()
	if !h.Equal(NewHistogram(m)) {
		t.Errorf("Reset left %d durations", h.Count())
	}
}

// TestRangeBounds checks durations outside the tracked bins: they are
// counted, in count, sum, min and max too, and a quantile falling among
// them is the bound of the tracked range (the zero threshold, the top of
// Max's bin), while rank 1 and the last are exact.
func TestRangeBounds(t *testing.T) {
	m := mustMapping(t, Config{Min: time.Millisecond, Max: time.Second})
	var ds []time.Duration
	for i := range 100 {
		switch {
		case i < 10: // 10 below Min: ranks 1..10
			ds = append(ds, time.Duration(i+1)*50*time.Microsecond)
		case i >= 95: // 5 above Max: ranks 96..100
			ds = append(ds, time.Duration(i)*time.Minute)
		default:
			ds = append(ds, time.Duration(i)*10*time.Millisecond)
		}
	}
	h := histogramOf(m, ds)
	if h.Bin(Underflow) != 10 || h.Bin(Overflow) != 5 || h.Count() != 100 {
		t.Fatalf("underflow %d, overflow %d, count %d; want 10, 5, 100", h.Bin(Underflow), h.Bin(Overflow), h.Count())
	}
	sorted := sortedCopy(ds)
	zero := time.Duration(m.ZeroThreshold()) // 2^-10 s: 976.5625 µs, below Min
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0, sorted[0]},             // rank 1: the exact min
		{0.05, zero},               // rank 5: in the underflow bin
		{0.10, zero},               // rank 10: likewise
		{0.97, time.Second},        // rank 97: in the overflow bin
		{0.99, time.Second},        // rank 99: likewise
		{1, sorted[len(sorted)-1]}, // rank 100: the exact max
	} {
		if got := h.Quantile(tc.q); got != tc.want {
			t.Errorf("Quantile(%g) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got, exact := h.Quantile(0.5), exactQuantile(sorted, 0.5); !within(got, exact, m.Accuracy()) {
		t.Errorf("Quantile(0.5) = %v, exact %v", got, exact)
	}
	if h.Sum() != sumOf(ds) {
		t.Errorf("sum %v, want %v", h.Sum(), sumOf(ds))
	}
}

func sumOf(ds []time.Duration) time.Duration {
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return s
}

// TestQuantileClamp: a bin's value may lie outside what was recorded;
// the estimate is moved back into [Min(), Max()].
func TestQuantileClamp(t *testing.T) {
	m := mustMapping(t, Config{})
	d := 10 * time.Millisecond
	if v := m.Value(m.Index(d)); v == d {
		t.Fatalf("test needs a duration that is not its bin's value")
	}
	h := histogramOf(m, []time.Duration{d, d, d})
	if got := h.Quantile(0.5); got != d {
		t.Errorf("Quantile(0.5) of three %v = %v", d, got)
	}
}

func TestMerge(t *testing.T) {
	m := mustMapping(t, Config{})
	ds := distributions[0].draw(50_001)
	whole := histogramOf(m, ds)
	a, b := histogramOf(m, ds[:20_000]), histogramOf(m, ds[20_000:])
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if !a.Equal(whole) {
		t.Errorf("halves merged: count %d sum %v; whole: count %d sum %v", a.Count(), a.Sum(), whole.Count(), whole.Sum())
	}
	if err := a.Merge(NewHistogram(m)); err != nil || !a.Equal(whole) {
		t.Errorf("merging an empty histogram changed it (%v)", err)
	}
	checkQuantiles(t, a, sortedCopy(ds), m.Accuracy())

	other := mustMapping(t, Config{Accuracy: 0.02})
	if err := a.Merge(NewHistogram(other)); !errors.Is(err, ErrMapping) {
		t.Errorf("merge across mappings: %v, want ErrMapping", err)
	}
}

// TestMergeWindows: a minute of traffic at 200 requests/s, counted in
// twelve 5-second histograms and in one 1-minute histogram; the twelve
// merge to exactly the one.
func TestMergeWindows(t *testing.T) {
	m := mustMapping(t, Config{})
	rng := rand.New(rand.NewPCG(60, 5))
	minute := NewHistogram(m)
	var fives [12]*Histogram
	for i := range fives {
		fives[i] = NewHistogram(m)
	}
	var all []time.Duration
	for range 60 * 200 {
		at := rng.Int64N(int64(time.Minute))
		d := logNormal(rng, 1, 20*time.Millisecond, 1)[0]
		fives[at/int64(5*time.Second)].Add(d)
		minute.Add(d)
		all = append(all, d)
	}
	merged := NewHistogram(m)
	for _, h := range fives {
		if err := merged.Merge(h); err != nil {
			t.Fatal(err)
		}
	}
	if !merged.Equal(minute) {
		t.Errorf("twelve 5 s merged: count %d sum %v; 1 min: count %d sum %v", merged.Count(), merged.Sum(), minute.Count(), minute.Sum())
	}
	worst := checkQuantiles(t, merged, sortedCopy(all), m.Accuracy())
	t.Logf("merged minute: largest relative error %.5f", worst)
}

// AddSlots merges counts kept by Slot as Add would have; a clone shares
// nothing with its original.
func TestAddSlotsAndClone(t *testing.T) {
	m, err := NewMapping(Config{})
	if err != nil {
		t.Fatal(err)
	}
	want, got := NewHistogram(m), NewHistogram(m)
	bins := make([]uint32, m.Slots())
	var sum int64
	lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
	for _, d := range []time.Duration{time.Microsecond, 3 * time.Millisecond, 3 * time.Millisecond, time.Hour} {
		want.Add(d)
		bins[m.Slot(d)]++
		sum += int64(d)
		lo, hi = min(lo, d), max(hi, d)
	}
	if err := got.AddSlots(bins, sum, lo, hi); err != nil || !got.Equal(want) {
		t.Fatalf("AddSlots: %v, equal %v", err, got.Equal(want))
	}
	if err := got.AddSlots(bins[1:], 0, 0, 0); err == nil {
		t.Error("AddSlots took bins of another length")
	}
	c := got.Clone()
	c.Add(time.Second)
	if !got.Equal(want) || c.Equal(got) {
		t.Error("a clone shares its bins with the original")
	}
}
