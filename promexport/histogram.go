package promexport

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pulse-dev/pulse/timeseries"
)

// The classic buckets' bounds are the powers of two from 2^lowestPower
// to 2^highestPower seconds (about 1 ms to 16 s). A power of two of
// seconds is a bin bound at every scale, so each classic bucket counts
// exactly the durations at or below its bound.
const (
	lowestPower  = -10
	highestPower = 4
)

// histogramMetric is one series' durations in both forms a scraper may
// ask for: classic buckets, in every exposition format, and the native
// histogram, in the protobuf one. Both are the recorder's bins as they
// are, with no re-binning.
type histogramMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	h      *dto.Histogram
}

func (m histogramMetric) Desc() *prometheus.Desc { return m.desc }

func (m histogramMetric) Write(out *dto.Metric) error {
	out.Label, out.Histogram = m.labels, m.h
	return nil
}

func newHistogramMetric(desc *prometheus.Desc, h *timeseries.Histogram, labelValues ...string) prometheus.Metric {
	return histogramMetric{desc: desc, labels: prometheus.MakeLabelPairs(desc, labelValues), h: histogramOf(h)}
}

// histogramOf is h in Prometheus' data model. The native histogram's
// schema is the mapping's scale, its zero bucket the underflow bin with
// the mapping's zero threshold, and bucket i the bin i: the bins' index
// is the native histograms' own.
func histogramOf(h *timeseries.Histogram) *dto.Histogram {
	m := h.Mapping()
	count, sum := h.Count(), h.Sum().Seconds()
	schema, zero := int32(m.Scale()), m.ZeroThreshold()/1e9
	under := h.Bin(timeseries.UnderflowBin)
	out := &dto.Histogram{
		SampleCount: &count, SampleSum: &sum,
		Schema: &schema, ZeroThreshold: &zero, ZeroCount: &under,
		Bucket: classicBuckets(h),
	}
	out.PositiveSpan, out.PositiveDelta = nativeBuckets(h)
	return out
}

// classicBuckets are h's cumulative counts at each power-of-two bound
// from the first at or above the zero threshold to the last at or below
// the top of Max's bin; +Inf is implied by the count.
func classicBuckets(h *timeseries.Histogram) []*dto.Bucket {
	m := h.Mapping()
	lo, hi := m.Bins()
	per := 1 << m.Scale() // bins per power of two
	run := h.Bin(timeseries.UnderflowBin)
	next := lo // the next bin to add to run
	var out []*dto.Bucket
	for k := lowestPower; k <= highestPower; k++ {
		top := k * per // the bin that ends at 2^k seconds
		if top < lo-1 || top > hi {
			continue
		}
		for ; next <= top; next++ {
			run += h.Bin(next)
		}
		le, n := math.Ldexp(1, k), run
		out = append(out, &dto.Bucket{UpperBound: &le, CumulativeCount: &n})
	}
	return out
}

// nativeBuckets are h's non-empty bins as spans and deltas. Durations
// above the top of Max's bin have no bin of their own: they are given to
// the bucket of the longest duration, so the count and the sum stay
// whole and a quantile among them falls between that top and the max.
func nativeBuckets(h *timeseries.Histogram) ([]*dto.BucketSpan, []int64) {
	m := h.Mapping()
	lo, hi := m.Bins()
	var idx []int
	var counts []int64
	for i := lo; i <= hi; i++ {
		if n := h.Bin(i); n > 0 {
			idx, counts = append(idx, i), append(counts, int64(n))
		}
	}
	if over := h.Bin(timeseries.OverflowBin); over > 0 {
		i := max(hi+1, int(math.Ceil(math.Log2(h.Max().Seconds())*float64(int(1)<<m.Scale()))))
		idx, counts = append(idx, i), append(counts, int64(over))
	}
	return spansOf(idx, counts)
}

// spansOf encodes ascending bucket indexes and their counts as native
// histogram spans (runs of consecutive buckets, each offset from the
// end of the one before) and deltas (each count less the one before).
func spansOf(idx []int, counts []int64) ([]*dto.BucketSpan, []int64) {
	var spans []*dto.BucketSpan
	deltas := make([]int64, len(counts))
	var prev int64
	end := 0 // index just past the last span
	for j, i := range idx {
		if j == 0 || i != end {
			off := int32(i - end)
			if j == 0 {
				off = int32(i)
			}
			spans = append(spans, &dto.BucketSpan{Offset: &off, Length: new(uint32)})
		}
		*spans[len(spans)-1].Length++
		end = i + 1
		deltas[j], prev = counts[j]-prev, counts[j]
	}
	return spans, deltas
}
