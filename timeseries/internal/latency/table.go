package latency

import (
	"math"
	"time"
)

// Slots is the number of counters a histogram of m keeps: the underflow
// bin, the tracked bins, the overflow bin. A recorder that keeps its own
// counts (package timeseries does, per second and stripe) sizes them by
// it and fills them by Slot.
func (m *Mapping) Slots() int { return m.slots() }

// Slot is where d is counted among Slots(): 0 at or below the zero
// threshold (negative durations too), Slots()-1 above the top of Max's
// bin. It gives exactly what the histograms' own binning gives, from a
// table instead of a search: a request path that records durations in
// several series computes it once.
func (m *Mapping) Slot(d time.Duration) int {
	if d >= m.tabLo && d < m.tabHi {
		e := m.table[int(math.Float64bits(float64(d))>>(52-tableBits))-m.tabOff]
		if e.cut >= 0 {
			if int64(d) >= e.cut {
				return int(e.base) + 1
			}
			return int(e.base)
		}
	}
	return m.slot(max(d, 0))
}

// tableBits is how many leading mantissa bits, with the exponent, pick a
// table entry: 128 entries per power of two, each spanning less than a
// bin at MaxScale (log2(1+1/128) < 1/64), so at most one bound falls in
// it.
const tableBits = 7

// tableEntry is the slot of the durations of one table span: base, or
// base+1 from cut on; cut < 0 means the span holds more than one bound
// and Slot computes the slot instead.
type tableEntry struct {
	base int32
	cut  int64
}

// buildTable fills m's table for every power of two from the zero
// threshold's to that of the top of Max's bin, below 2⁵³ ns where
// float64 holds durations exactly.
func (m *Mapping) buildTable() {
	top := m.uppers[len(m.uppers)-1] + 1
	eLo, eHi := math.Ilogb(float64(m.uppers[0])), min(math.Ilogb(float64(top)), 52)
	if eHi < eLo {
		return
	}
	m.tabLo, m.tabHi = time.Duration(1)<<eLo, time.Duration(1)<<(eHi+1)
	m.tabOff = (eLo + 1023) << tableBits
	for e := eLo; e <= eHi; e++ {
		for k := range 1 << tableBits {
			lo := int64(math.Ceil(math.Ldexp(1+float64(k)/(1<<tableBits), e)))
			hi := int64(math.Ceil(math.Ldexp(1+float64(k+1)/(1<<tableBits), e))) - 1
			base, top := m.slot(time.Duration(lo)), m.slot(time.Duration(hi))
			entry := tableEntry{base: int32(base), cut: math.MaxInt64}
			switch {
			case top == base+1:
				for a, b := lo, hi; ; { // the first duration of slot top
					if a == b {
						entry.cut = a
						break
					}
					if mid := a + (b-a)/2; m.slot(time.Duration(mid)) == top {
						b = mid
					} else {
						a = mid + 1
					}
				}
			case top > base+1:
				entry.cut = -1
			}
			m.table = append(m.table, entry)
		}
	}
}
