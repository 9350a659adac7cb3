package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pulse-dev/pulse/timeseries"
)

// bounds are the upper bounds, in seconds, of the buckets of
// pulse_request_duration_seconds; +Inf is implied.
var bounds = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// bucketOf maps the bins of a mapping to the buckets: a bin is counted in
// the first bucket whose bound is at least the bin's upper bound, so a
// bucket never counts a duration above its bound. The bin that straddles
// a bound is counted in the next bucket whole: a duration at most one bin
// width below a bound (a factor (1+α)/(1-α), 10.5 % at α = 5 %) may be
// counted above it. -1 is +Inf only.
type bucketOf struct {
	m     *timeseries.DurationMapping
	lo    int
	slots []int // by bin index - lo, then underflow, overflow
}

func newBucketOf(m *timeseries.DurationMapping) *bucketOf {
	lo, hi := m.Bins()
	b := &bucketOf{m: m, lo: lo}
	for i := lo; i <= hi; i++ {
		b.slots = append(b.slots, bucketAt(m.Upper(i)))
	}
	b.slots = append(b.slots, bucketAt(m.Upper(timeseries.UnderflowBin)), -1)
	return b
}

// bucketAt is the first bucket whose bound, in ns, is at least upper.
func bucketAt(upper float64) int {
	for j, le := range bounds {
		if upper <= le*1e9 {
			return j
		}
	}
	return -1
}

// cumulative returns the bucket counts of h by le, as Prometheus wants
// them: each counts every duration at or below its bound.
func (b *bucketOf) cumulative(h *timeseries.Histogram) map[float64]uint64 {
	counts := make([]uint64, len(bounds))
	add := func(slot int, n uint64) {
		if j := b.slots[slot]; j >= 0 && n > 0 {
			counts[j] += n
		}
	}
	for s := range len(b.slots) - 2 {
		add(s, h.Bin(b.lo+s))
	}
	add(len(b.slots)-2, h.Bin(timeseries.UnderflowBin))
	out := make(map[float64]uint64, len(bounds))
	var run uint64
	for j, le := range bounds {
		run += counts[j]
		out[le] = run
	}
	return out
}

// collectDurations sends one histogram per series of src that keeps
// durations, when src is a recorder that keeps them.
func (c *Collector) collectDurations(ch chan<- prometheus.Metric) {
	rec, ok := c.src.(*timeseries.Recorder)
	if !ok {
		return
	}
	tots := rec.DurationTotals()
	if len(tots) == 0 {
		return
	}
	m := tots[0].Hist.Mapping()
	c.mu.Lock()
	if c.buckets == nil || !c.buckets.m.Equal(m) {
		c.buckets = newBucketOf(m)
	}
	b := c.buckets
	c.mu.Unlock()
	for _, t := range tots {
		ch <- prometheus.MustNewConstHistogram(c.durations, t.Hist.Count(), t.Hist.Sum().Seconds(), b.cumulative(t.Hist), t.Name)
	}
}
