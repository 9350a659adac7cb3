package latency

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
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
// below the bin of Config.Min and above the bin of Config.Max.
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
	// Min is the smallest duration given its own bin (default 10 µs, at
	// least LowestMin); durations at or below the lower bound of its bin,
	// and negative ones, are counted in the underflow bin.
	Min time.Duration
	// Max is the largest duration given its own bin (default 10 min);
	// durations above the upper bound of its bin are counted in the
	// overflow bin.
	Max time.Duration
}

// A Mapping turns durations into bin indexes and back. Its bins are the
// base-2 exponential buckets of Prometheus native histograms and
// OpenTelemetry exponential histograms, on seconds: at scale s, bin i
// holds the durations in (2^((i-1)/2^s), 2^(i/2^s)] seconds, so a
// histogram of a Mapping exports to either format bucket for bucket (the
// index is Prometheus's; OpenTelemetry's is i-1). The scale is the
// coarsest whose bins keep every duration within the accuracy of its
// bin's representative value 2·lo·hi/(lo+hi): that value is within
// (γ-1)/(γ+1) of every duration of the bin, γ = 2^(2^-s) its width,
// which must stay a hair below α so that rounding to whole nanoseconds
// stays inside it too. Scale 3 serves 5 %, 5 serves 2 % and 6 serves
// 1 %.
//
// Each bin's upper bound is kept in whole nanoseconds, found exactly by
// integer arithmetic, so where a duration falls never depends on float
// rounding. The bins from the one holding Min to the one holding Max are
// tracked; durations at or below the lower bound of Min's bin (the zero
// threshold) count in the underflow bin, the zero bucket of both
// formats, and those above the upper bound of Max's bin in the overflow
// bin. Histograms merge only if their mappings are Equal.
// A Mapping is immutable and safe for concurrent use.
type Mapping struct {
	accuracy float64
	scale    int
	min, max time.Duration
	lo, hi   int // Index(min), Index(max)
	// uppers[k] is the largest duration of bin lo-1+k, in ns, for k from 0
	// (the zero threshold: the underflow bin's top) to hi-lo+1 (Max's bin).
	uppers []int64
	tops   []float64       // Upper(i) for lo-1 ≤ i ≤ hi, correctly rounded
	reps   []time.Duration // Value(i) for lo ≤ i ≤ hi
	names  []string        // i-lo in decimal, the Redis field of bin i
	// Slot's table, for durations in [tabLo, tabHi); see buildTable.
	table        []tableEntry
	tabLo, tabHi time.Duration
	tabOff       int
}

// MaxScale is the finest scale a Mapping uses, the one of MinAccuracy.
const MaxScale = 6

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
	if err := cfg.check(); err != nil {
		return nil, err
	}
	m := &Mapping{accuracy: cfg.Accuracy, scale: scaleFor(cfg.Accuracy, cfg.Min), min: cfg.Min, max: cfg.Max}
	m.lo, m.hi = m.binOf(cfg.Min), m.binOf(cfg.Max)
	roots := rootPowers(m.scale)
	for i := m.lo - 1; i <= m.hi; i++ {
		b := exactBound(i, m.scale, roots)
		m.uppers = append(m.uppers, upperNanos(i, m.scale, b))
		top, _ := b.Float64() // rounded once: the formats' own float bound
		m.tops = append(m.tops, top)
	}
	for i := m.lo; i <= m.hi; i++ {
		m.reps = append(m.reps, time.Duration(math.Round(m.value(i))))
		m.names = append(m.names, strconv.Itoa(i-m.lo))
	}
	m.buildTable()
	return m, nil
}

func (cfg Config) check() error {
	// Written so that NaN fails too.
	if !(cfg.Accuracy >= MinAccuracy && cfg.Accuracy <= MaxAccuracy) {
		return fmt.Errorf("latency: accuracy %g outside [%g, %g]", cfg.Accuracy, MinAccuracy, MaxAccuracy)
	}
	if cfg.Min < 0 || cfg.Max < 0 {
		return errors.New("latency: negative Min or Max")
	}
	if cfg.Min < LowestMin {
		return fmt.Errorf("latency: Min %v below %v", cfg.Min, LowestMin)
	}
	if cfg.Min >= cfg.Max {
		return fmt.Errorf("latency: Min %v not below Max %v", cfg.Min, cfg.Max)
	}
	return nil
}

// scaleFor is the coarsest scale whose bins hold every duration from
// min on within accuracy of their value, rounding to whole nanoseconds
// (at most 0.5 ns, 0.5/min relative) and float rounding included.
func scaleFor(accuracy float64, min time.Duration) int {
	a := accuracy - 0.5/float64(min) - 1e-9
	for s := 0; s < MaxScale; s++ {
		g := math.Exp2(math.Exp2(-float64(s)))
		if (g-1)/(g+1) <= a {
			return s
		}
	}
	return MaxScale
}

// bound is the upper bound of bin i at scale s in ns, as a float:
// 10⁹·2^(i/2^s).
func bound(i, s int) float64 { return 1e9 * math.Exp2(float64(i)/float64(int(1)<<s)) }

// rootPowers are 2^(j/2^s) for j < 2^s, to 256 bits.
func rootPowers(s int) []*big.Float {
	const prec = 256
	root := new(big.Float).SetPrec(prec).SetInt64(2)
	for range s {
		root.Sqrt(root)
	}
	pows := []*big.Float{new(big.Float).SetPrec(prec).SetInt64(1)}
	for j := 1; j < 1<<s; j++ {
		pows = append(pows, new(big.Float).SetPrec(prec).Mul(pows[j-1], root))
	}
	return pows
}

// exactBound is bound(i, s) to 256 bits, from roots = rootPowers(s).
func exactBound(i, s int, roots []*big.Float) *big.Float {
	e := i >> s // floor(i / 2^s)
	v := new(big.Float).SetPrec(256).Mul(roots[i-e<<s], big.NewFloat(1e9))
	return v.SetMantExp(v, e)
}

// upperNanos is the largest whole duration in bin i at scale s: the
// greatest d with d ≤ 10⁹·2^(i/2^s), given b, that bound to 256 bits.
// Where b lies within its own rounding of a whole number, an exact test
// decides, so the tops agree with the formats' bounds to the nanosecond.
func upperNanos(i, s int, b *big.Float) int64 {
	d, _ := b.Int64() // truncation: the floor, unless b is a hair low
	frac := new(big.Float).Sub(b, new(big.Float).SetInt64(d))
	if frac.Cmp(big.NewFloat(1e-30)) > 0 && frac.Cmp(big.NewFloat(1-1e-30)) < 0 {
		return d
	}
	for d > 0 && !atMost(d, i, s) {
		d--
	}
	for atMost(d+1, i, s) {
		d++
	}
	return d
}

// atMost reports whether d ns ≤ 10⁹·2^(i/2^s), exactly: whether
// d^(2^s) ≤ 2^i·10^(9·2^s), raised to integers.
func atMost(d int64, i, s int) bool {
	k := int64(1) << s
	l := new(big.Int).Exp(big.NewInt(d), big.NewInt(k), nil)
	r := new(big.Int).Exp(big.NewInt(1e9), big.NewInt(k), nil)
	if i >= 0 {
		r.Lsh(r, uint(i))
	} else {
		l.Lsh(l, uint(-i))
	}
	return l.Cmp(r) <= 0
}

// binOf is the bin holding d ≥ 1 ns: the least i with d ≤ upperNanos(i).
func (m *Mapping) binOf(d time.Duration) int {
	i := int(math.Ceil(math.Log2(float64(d)/1e9) * float64(int(1)<<m.scale)))
	for atMost(int64(d), i-1, m.scale) {
		i--
	}
	for !atMost(int64(d), i, m.scale) {
		i++
	}
	return i
}

// bounds are the lower (exclusive) and upper (inclusive) bound of bin i,
// in ns.
func (m *Mapping) bounds(i int) (lo, hi float64) { return m.Upper(i - 1), m.Upper(i) }

// value is the unrounded representative value of bin i, in ns.
func (m *Mapping) value(i int) float64 {
	lo, hi := m.bounds(i)
	return 2 * lo * hi / (lo + hi)
}

// Index is the bin of d: between Bins' lo and hi from the zero
// threshold (exclusive) to the upper bound of Max's bin, Underflow at or
// below the threshold (negative durations too), Overflow above.
func (m *Mapping) Index(d time.Duration) int { return m.slotIndex(m.slot(max(d, 0))) }

// Value is the representative duration of bin i, the one a quantile
// falling in it reports, rounded to the nanosecond: within the accuracy
// of every duration of the bin. Underflow gives the zero threshold and
// Overflow the upper bound of Max's bin: how quantiles treat them is
// told at Histogram.Quantile.
func (m *Mapping) Value(i int) time.Duration {
	switch i {
	case Underflow:
		return time.Duration(m.uppers[0])
	case Overflow:
		return time.Duration(m.uppers[len(m.uppers)-1])
	}
	if i >= m.lo && i <= m.hi {
		return m.reps[i-m.lo]
	}
	return time.Duration(math.Round(m.value(i)))
}

// Upper is the upper bound of bin i in nanoseconds, 10⁹·2^(i/2^Scale):
// every duration the bin counts is at most Upper(i), and every one of
// bin i+1 above it. The underflow bin gives the zero threshold and the
// overflow bin +Inf.
func (m *Mapping) Upper(i int) float64 {
	switch i {
	case Underflow:
		return m.ZeroThreshold()
	case Overflow:
		return math.Inf(1)
	}
	if i >= m.lo-1 && i <= m.hi {
		return m.tops[i-m.lo+1]
	}
	return bound(i, m.scale)
}

// ZeroThreshold is the upper bound, in nanoseconds, of the underflow
// bin: the lower bound of Min's bin, 10⁹·2^((lo-1)/2^Scale). It is the
// zero bucket's threshold when a histogram is exported.
func (m *Mapping) ZeroThreshold() float64 { return m.tops[0] }

// Scale is the bins' scale: bin i ends at 2^(i/2^Scale) seconds.
func (m *Mapping) Scale() int { return m.scale }

// Bins returns the lowest and highest index of the tracked range.
func (m *Mapping) Bins() (lo, hi int) { return m.lo, m.hi }

// Accuracy is the relative error α.
func (m *Mapping) Accuracy() float64 { return m.accuracy }

// Min is the smallest duration given its own bin, as configured.
func (m *Mapping) Min() time.Duration { return m.min }

// Max is the largest duration given its own bin, as configured.
func (m *Mapping) Max() time.Duration { return m.max }

// Equal reports whether m and o bin every duration alike.
func (m *Mapping) Equal(o *Mapping) bool {
	return m == o || m.accuracy == o.accuracy && m.min == o.min && m.max == o.max
}

// slots is the number of counters a histogram of m keeps: the underflow
// bin, the tracked bins, the overflow bin.
func (m *Mapping) slots() int { return m.hi - m.lo + 3 }

// slot is where d ≥ 0 is counted: 0 at or below the zero threshold,
// slots()-1 above the top of Max's bin, else the first bin whose upper
// bound is at least d.
func (m *Mapping) slot(d time.Duration) int {
	v := int64(d)
	if v <= m.uppers[0] {
		return 0
	}
	if v > m.uppers[len(m.uppers)-1] {
		return len(m.uppers)
	}
	k, _ := slices.BinarySearch(m.uppers, v)
	return k
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
