package otelexport

import (
	"math"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/pulse-dev/pulse/timeseries"
)

// pointOf is h as an exponential histogram point, without attributes or
// times. The recorder's bin i holds (2^((i-1)/2^s), 2^(i/2^s)] seconds,
// OpenTelemetry's bucket i holds (2^(i/2^s), 2^((i+1)/2^s)]: bucket
// i-1 is bin i.
func pointOf(h *timeseries.Histogram) metricdata.ExponentialHistogramDataPoint[float64] {
	m := h.Mapping()
	point := metricdata.ExponentialHistogramDataPoint[float64]{
		Count:         h.Count(),
		Sum:           h.Sum().Seconds(),
		Scale:         int32(m.Scale()),
		ZeroCount:     h.Bin(timeseries.UnderflowBin),
		ZeroThreshold: m.ZeroThreshold() / 1e9,
	}
	if h.Count() > 0 {
		point.Min = metricdata.NewExtrema(h.Min().Seconds())
		point.Max = metricdata.NewExtrema(h.Max().Seconds())
	}
	point.PositiveBucket = bucketsOf(h)
	return point
}

// bucketsOf is h's tracked bins from the first non-empty one to the last
// as a dense run, the overflow bin given to the bucket of the longest
// duration.
func bucketsOf(h *timeseries.Histogram) metricdata.ExponentialBucket {
	m := h.Mapping()
	lo, hi := m.Bins()
	first, last := hi+1, lo-1
	for i := lo; i <= hi; i++ {
		if h.Bin(i) > 0 {
			first, last = min(first, i), i
		}
	}
	over, overBin := h.Bin(timeseries.OverflowBin), 0
	if over > 0 {
		overBin = max(hi+1, int(math.Ceil(math.Log2(h.Max().Seconds())*float64(int(1)<<m.Scale()))))
		first, last = min(first, overBin), overBin
	}
	if first > last {
		return metricdata.ExponentialBucket{}
	}
	counts := make([]uint64, last-first+1)
	for i := first; i <= min(last, hi); i++ {
		counts[i-first] = h.Bin(i)
	}
	if over > 0 {
		counts[overBin-first] += over
	}
	return metricdata.ExponentialBucket{Offset: int32(first - 1), Counts: counts}
}
