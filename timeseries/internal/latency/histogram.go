package latency

import (
	"errors"
	"math"
	"slices"
	"time"
)

// A Histogram counts durations in the bins of its Mapping, with their
// count, sum, min and max. It is a plain value for one goroutine: the
// result of recording (Add, AddSlots), of decoding a Redis hash, or of
// merging either. Histograms of equal mappings merge by adding counts.
type Histogram struct {
	m        *Mapping
	count    uint64
	sum      int64 // ns
	min, max time.Duration
	// bins[0] is the underflow bin, bins[len-1] the overflow bin, and
	// bins[s] for the others bin index s-1+lo: see Mapping.slot.
	bins []uint64
}

// NewHistogram returns an empty histogram of m.
func NewHistogram(m *Mapping) *Histogram {
	return &Histogram{m: m, min: math.MaxInt64, max: math.MinInt64, bins: make([]uint64, m.slots())}
}

// Mapping is the mapping h counts by.
func (h *Histogram) Mapping() *Mapping { return h.m }

// Add counts d once. A negative d is counted as 0, in the underflow bin.
func (h *Histogram) Add(d time.Duration) {
	d = max(d, 0)
	h.bins[h.m.slot(d)]++
	h.count++
	h.sum += int64(d)
	h.min = min(h.min, d)
	h.max = max(h.max, d)
}

// Count is the number of durations counted.
func (h *Histogram) Count() uint64 { return h.count }

// Sum is the total of the durations counted.
func (h *Histogram) Sum() time.Duration { return time.Duration(h.sum) }

// Min is the shortest duration counted, exactly; 0 if none.
func (h *Histogram) Min() time.Duration {
	if h.count == 0 {
		return 0
	}
	return h.min
}

// Max is the longest duration counted, exactly; 0 if none.
func (h *Histogram) Max() time.Duration {
	if h.count == 0 {
		return 0
	}
	return h.max
}

// Mean is Sum/Count, exact up to the nanosecond; 0 if empty.
func (h *Histogram) Mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return time.Duration(h.sum / int64(h.count))
}

// Bin is the count of bin i (an index of the Mapping, Underflow or
// Overflow); 0 outside the tracked range.
func (h *Histogram) Bin(i int) uint64 {
	switch {
	case i == Underflow:
		return h.bins[0]
	case i == Overflow:
		return h.bins[len(h.bins)-1]
	case i < h.m.lo || i > h.m.hi:
		return 0
	}
	return h.bins[i-h.m.lo+1]
}

// Equal reports whether h and o have the same mapping, bins, count, sum,
// min and max.
func (h *Histogram) Equal(o *Histogram) bool {
	return h.m.Equal(o.m) && h.count == o.count && h.sum == o.sum &&
		h.Min() == o.Min() && h.Max() == o.Max() && slices.Equal(h.bins, o.bins)
}

// Reset empties h.
func (h *Histogram) Reset() {
	clear(h.bins)
	h.count, h.sum, h.min, h.max = 0, 0, math.MaxInt64, math.MinInt64
}

// ErrMapping is returned by Merge for histograms of different mappings.
var ErrMapping = errors.New("latency: histograms of different mappings")

// Merge adds o into h: bin counts, count and sum add, min and max take
// the smaller and the larger. The result is exactly the histogram of
// all durations counted in either. o is not changed.
func (h *Histogram) Merge(o *Histogram) error {
	if !h.m.Equal(o.m) {
		return ErrMapping
	}
	for s, n := range o.bins {
		h.bins[s] += n
	}
	h.count += o.count
	h.sum += o.sum
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
	return nil
}

// Quantile estimates the q-quantile, in the nearest-rank convention of
// Rank: the duration of rank r = Rank(q, Count()) among those counted.
//
// Rank 1 and rank Count() are Min and Max, exact. Otherwise the result
// is the representative value of the bin holding rank r, moved into
// [Min, Max], so when r falls in a tracked bin it is within the
// accuracy α of the exact value (relative error ≤ α, plus at most half
// a nanosecond of rounding). When r falls in the underflow bin the
// result is Config.Min and the exact value lies in [Min(), Config.Min);
// in the overflow bin it is Config.Max and the exact value lies in
// (Config.Max, Max()]: outside the tracked range only these bounds hold.
// An empty histogram gives 0.
func (h *Histogram) Quantile(q float64) time.Duration {
	r := Rank(q, h.count)
	switch r {
	case 0:
		return 0
	case 1:
		return h.min
	case h.count:
		return h.max
	}
	var seen uint64
	for s, n := range h.bins {
		if seen += n; seen >= r {
			v := h.m.Value(h.m.slotIndex(s))
			return min(max(v, h.min), h.max)
		}
	}
	// Unreachable while the bins add up to the count, as Decode checks.
	return h.max
}

// AddSlots merges counts kept elsewhere by Mapping.Slot into h: bins[s]
// durations in slot s, whose sum, min and max are given. It fails with
// ErrMapping when bins is not Slots() long, and changes nothing when the
// bins are empty.
func (h *Histogram) AddSlots(bins []uint32, sum int64, lo, hi time.Duration) error {
	if len(bins) != len(h.bins) {
		return ErrMapping
	}
	var n uint64
	for s, c := range bins {
		h.bins[s] += uint64(c)
		n += uint64(c)
	}
	if n == 0 {
		return nil
	}
	h.count += n
	h.sum += sum
	h.min = min(h.min, lo)
	h.max = max(h.max, hi)
	return nil
}

// Clone returns a copy of h that shares nothing with it.
func (h *Histogram) Clone() *Histogram {
	c := *h
	c.bins = slices.Clone(h.bins)
	return &c
}
