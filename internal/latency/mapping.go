package latency

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Defaults for Config's zero fields.
const (
	DefaultAccuracy = 0.05
	DefaultMin      = 10 * time.Microsecond
	DefaultMax      = 10 * time.Minute
)

// Bounds on Config.
const (
	MinAccuracy = 0.01
	MaxAccuracy = 0.05
	// LowestMin is the smallest Config.Min: below a microsecond the
	// rounding of a quantile to whole nanoseconds would no longer be
	// small beside the relative error.
	LowestMin = time.Microsecond
)

// Underflow and Overflow are the indexes Mapping.Index gives durations
// below Config.Min and above Config.Max.
const (
	Underflow = math.MinInt32
	Overflow  = math.MaxInt32
)

// Config sets the accuracy and tracked range of a Mapping. Zero fields
// take the defaults.
type Config struct {
	// Accuracy is the relative error of a quantile, in [MinAccuracy,
	// MaxAccuracy]; 0 means DefaultAccuracy (5 %).
	Accuracy float64
	// Min is the smallest duration given its own bin (default DefaultMin,
	// at least LowestMin); shorter ones, and negative ones, are counted in
	// the underflow bin.
	Min time.Duration
	// Max is the largest duration given its own bin (default 10 min);
	// longer ones are counted in the overflow bin.
	Max time.Duration
}

// A Mapping turns durations into bin indexes and back. Like DDSketch's
// logarithmic mapping, bin i holds the durations from just above its
// lower bound to its upper bound, bounds that grow by a factor of at most
// γ = (1+α')/(1-α') from bin to bin; the bin's representative value
// 2·lo·hi/(lo+hi) is then within α' of every duration in it, and rounded
// to the nanosecond within the accuracy α: α' = α - 0.5 ns/Min (a
// hair less, for float rounding), 1 % finer bins at 5 % with Min = 1 µs. To spare Record a logarithm, the index comes from the
// float64 exponent of the duration in nanoseconds plus a cubic in its
// mantissa that stands for log2 of the mantissa (exact at powers of two,
// increasing, its slope at least 10/7·ln 2 of the true one): the bins
// are made 1 % narrower so that none is wider than γ. Indexes depend on
// the accuracy and Min: histograms merge only if their mappings are
// Equal.
// A Mapping is immutable and safe for concurrent use.
type Mapping struct {
	accuracy float64
	mult     float64 // bins per unit of approximate log2
	min, max time.Duration
	lo, hi   int             // Index(min), Index(max)
	reps     []time.Duration // Value(i) for lo ≤ i ≤ hi
	names    []string        // i-lo in decimal, the Redis field of bin i
	// Slot's table, for durations in [tabLo, tabHi); see buildTable.
	table        []tableEntry
	tabLo, tabHi time.Duration
	tabOff       int
}

// NewMapping checks cfg, fills its zero fields and returns its Mapping.
func NewMapping(cfg Config) (*Mapping, error) {
	if cfg.Accuracy == 0 {
		cfg.Accuracy = DefaultAccuracy
	}
	if cfg.Min == 0 {
		cfg.Min = DefaultMin
	}
	if cfg.Max == 0 {
		cfg.Max = DefaultMax
	}
	// Written so that NaN fails too.
	if !(cfg.Accuracy >= MinAccuracy && cfg.Accuracy <= MaxAccuracy) {
		return nil, fmt.Errorf("latency: accuracy %g outside [%g, %g]", cfg.Accuracy, MinAccuracy, MaxAccuracy)
	}
	if cfg.Min < 0 || cfg.Max < 0 {
		return nil, errors.New("latency: negative Min or Max")
	}
	if cfg.Min < LowestMin {
		return nil, fmt.Errorf("latency: Min %v below %v", cfg.Min, LowestMin)
	}
	if cfg.Min >= cfg.Max {
		return nil, fmt.Errorf("latency: Min %v not below Max %v", cfg.Min, cfg.Max)
	}
	// Bins are built for a slightly finer accuracy, so that rounding a
	// value to whole nanoseconds (at most 0.5 ns, 0.5/Min relative) and
	// float rounding keep every tracked duration within the accuracy.
	a := cfg.Accuracy - 0.5/float64(cfg.Min) - 1e-9
	lnGamma := math.Log((1 + a) / (1 - a))
	m := &Mapping{accuracy: cfg.Accuracy, mult: 7 / (10 * lnGamma), min: cfg.Min, max: cfg.Max}
	m.lo, m.hi = m.index(cfg.Min), m.index(cfg.Max)
	for i := m.lo; i <= m.hi; i++ {
		m.reps = append(m.reps, time.Duration(math.Round(m.value(i))))
		m.names = append(m.names, strconv.Itoa(i-m.lo))
	}
	m.buildTable()
	return m, nil
}

// Coefficients of the cubic P(x) = a·x³ + b·x² + c·x that stands for
// log2(1+x) on [0, 1): P(0) = 0, P(1) = 1, P' > 0. With v = 2^e·(1+x),
// d(e+P(x))/d(log2 v) = (1+x)·P'(x)·ln 2, whose least value on [0, 1)
// is 10/7·ln 2, at x = 0 and x = 2/3; hence the 7/10 in mult.
const (
	cubicA = 6.0 / 35
	cubicB = -3.0 / 5
	cubicC = 10.0 / 7
)

// approxLog2 is e + P(x) for v = 2^e·(1+x), v > 0 and finite.
func approxLog2(v float64) float64 {
	bits := math.Float64bits(v)
	e := int(bits>>52&0x7ff) - 1023
	x := math.Float64frombits(bits&(1<<52-1)|1023<<52) - 1
	return float64(e) + ((cubicA*x+cubicB)*x+cubicC)*x
}

// approxExp2 is the inverse of approxLog2.
func approxExp2(y float64) float64 {
	e := math.Floor(y)
	t := y - e
	lo, hi := 0.0, 1.0 // P(lo) ≤ t < P(hi): bisect to the last bit
	for range 64 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if ((cubicA*mid+cubicB)*mid+cubicC)*mid <= t {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Ldexp(1+lo, int(e))
}

// index is the bin of d ≥ 1 ns: ⌈approxLog2(d)·mult⌉.
func (m *Mapping) index(d time.Duration) int {
	x := approxLog2(float64(d)) * m.mult
	i := int(x) // x ≥ 0, as d ≥ 1 ns: truncation is the floor
	if float64(i) < x {
		i++
	}
	return i
}

// bounds are the lower (exclusive) and upper (inclusive) bound of bin i,
// in ns.
func (m *Mapping) bounds(i int) (lo, hi float64) {
	return approxExp2(float64(i-1) / m.mult), approxExp2(float64(i) / m.mult)
}

// value is the unrounded representative value of bin i, in ns.
func (m *Mapping) value(i int) float64 {
	lo, hi := m.bounds(i)
	return 2 * lo * hi / (lo + hi)
}

// Index is the bin of d: between Bins' lo and hi for Min ≤ d ≤ Max,
// Underflow below Min, Overflow above Max.
func (m *Mapping) Index(d time.Duration) int {
	switch {
	case d < m.min:
		return Underflow
	case d > m.max:
		return Overflow
	}
	return m.index(d)
}

// Value is the representative duration of bin i, the one a quantile
// falling in it reports, rounded to the nanosecond: within the accuracy
// of every duration of the bin. Underflow gives Min and
// Overflow Max: how quantiles treat them is told at Histogram.Quantile.
func (m *Mapping) Value(i int) time.Duration {
	switch i {
	case Underflow:
		return m.min
	case Overflow:
		return m.max
	}
	if i >= m.lo && i <= m.hi {
		return m.reps[i-m.lo]
	}
	return time.Duration(math.Round(m.value(i)))
}

// Upper is the upper bound of bin i in nanoseconds: every duration the
// bin counts is at most Upper(i). The underflow bin gives Min (its
// durations are below it) and the overflow bin +Inf.
func (m *Mapping) Upper(i int) float64 {
	switch i {
	case Underflow:
		return float64(m.min)
	case Overflow:
		return math.Inf(1)
	}
	_, hi := m.bounds(i)
	return hi
}

// Bins returns the lowest and highest index of the tracked range.
func (m *Mapping) Bins() (lo, hi int) { return m.lo, m.hi }

// Accuracy is the relative error α.
func (m *Mapping) Accuracy() float64 { return m.accuracy }

// Min is the smallest tracked duration.
func (m *Mapping) Min() time.Duration { return m.min }

// Max is the largest tracked duration.
func (m *Mapping) Max() time.Duration { return m.max }

// Equal reports whether m and o bin every duration alike.
func (m *Mapping) Equal(o *Mapping) bool {
	return m == o || m.accuracy == o.accuracy && m.min == o.min && m.max == o.max
}

// slots is the number of counters a histogram of m keeps: the underflow
// bin, the tracked bins, the overflow bin.
func (m *Mapping) slots() int { return m.hi - m.lo + 3 }

// slot is where d is counted: 0 below Min, slots()-1 above Max.
func (m *Mapping) slot(d time.Duration) int {
	switch {
	case d < m.min:
		return 0
	case d > m.max:
		return m.hi - m.lo + 2
	}
	return m.index(d) - m.lo + 1
}

// slotIndex is the bin index counted in slot s.
func (m *Mapping) slotIndex(s int) int {
	switch s {
	case 0:
		return Underflow
	case m.hi - m.lo + 2:
		return Overflow
	}
	return s - 1 + m.lo
}

// Rank is the nearest rank of quantile q among n sorted values, the
// convention of every quantile here: the ⌈q·n⌉-th smallest (counting
// from 1), and the smallest for q = 0; q is clamped to [0, 1], NaN
// counts as 0. Rank(q, 0) is 0.
func Rank(q float64, n uint64) uint64 {
	if n == 0 {
		return 0
	}
	if !(q > 0) {
		return 1
	}
	if q >= 1 {
		return n
	}
	r := uint64(math.Ceil(q * float64(n)))
	return min(max(r, 1), n)
}

// Slots is the number of counters a histogram of m keeps: the underflow
// bin, the tracked bins, the overflow bin. A recorder that keeps its own
// counts (package timeseries does, per second and stripe) sizes them by
// it and fills them by Slot.
func (m *Mapping) Slots() int { return m.slots() }

// Slot is where d is counted among Slots(): 0 below Min (negative
// durations too), Slots()-1 above Max. It gives exactly what the
// histograms' own binning gives, from a table instead of the cubic: a
// request path that records durations in several series computes it
// once, and the table halves its cost.
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
// table entry: 64 entries per power of two, each spanning less than a
// bin at the finest accuracy, so at most one bin bound falls in it.
const tableBits = 6

// tableEntry is the slot of the durations of one table span: base, or
// base+1 from cut on; cut < 0 means the span holds more than one bound
// and Slot computes the slot instead.
type tableEntry struct {
	base int32
	cut  int64
}

// buildTable fills m's table for every power of two from Min's to
// Max's, below 2⁵³ ns where float64 holds durations exactly.
func (m *Mapping) buildTable() {
	eLo, eHi := math.Ilogb(float64(m.min)), min(math.Ilogb(float64(m.max)), 52)
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
