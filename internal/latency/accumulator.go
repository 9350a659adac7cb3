package latency

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// maxStripes bounds the stripes of an Accumulator.
const maxStripes = 8

// An Accumulator counts durations recorded by many goroutines at once
// until a flusher takes them. Its counts are split in stripes, each a
// fixed array of bins under its own mutex; a goroutine mostly records
// into the stripe of its P, so cores rarely contend. Record costs one
// uncontended lock, the bin's index and a few adds, and never allocates.
type Accumulator struct {
	m       *Mapping
	mask    uint32
	stripes []accStripe
}

type accStripe struct {
	mu       sync.Mutex
	count    uint64
	sum      int64
	min, max time.Duration
	bins     []uint64
	_        [64]byte // keeps the next stripe's hot fields off this line
}

// NewAccumulator returns an empty Accumulator of m, with as many stripes
// as GOMAXPROCS rounded up to a power of two, at most 8.
func NewAccumulator(m *Mapping) *Accumulator {
	n := 1
	for n < runtime.GOMAXPROCS(0) && n < maxStripes {
		n *= 2
	}
	a := &Accumulator{m: m, mask: uint32(n - 1), stripes: make([]accStripe, n)}
	for i := range a.stripes {
		s := &a.stripes[i]
		s.bins = make([]uint64, m.slots())
		s.min, s.max = math.MaxInt64, math.MinInt64
	}
	return a
}

// Mapping is the mapping a counts by.
func (a *Accumulator) Mapping() *Mapping { return a.m }

// stripeID names one of maxStripes stripes of every Accumulator.
type stripeID struct{ n uint32 }

// stripeIDs hands out stripe numbers so that each P mostly keeps one:
// sync.Pool caches per P, so a goroutine usually gets back the number
// its P used last. New returns pointers into a fixed array: it never
// allocates.
var (
	stripeSet  [maxStripes]stripeID
	nextStripe atomic.Uint32
	stripeIDs  = sync.Pool{New: func() any { return &stripeSet[nextStripe.Add(1)%maxStripes] }}
)

func init() {
	for i := range stripeSet {
		stripeSet[i].n = uint32(i)
	}
}

// Record counts d once. A negative d is counted as 0, in the underflow
// bin. Safe for concurrent use with Record and Take.
func (a *Accumulator) Record(d time.Duration) {
	d = max(d, 0)
	slot := a.m.slot(d) // outside the lock
	id := stripeIDs.Get().(*stripeID)
	s := &a.stripes[id.n&a.mask]
	s.mu.Lock()
	s.bins[slot]++
	s.count++
	s.sum += int64(d)
	s.min = min(s.min, d)
	s.max = max(s.max, d)
	s.mu.Unlock()
	stripeIDs.Put(id)
}

// Take returns what was recorded since the last Take and empties a.
// Every recorded duration is in exactly one Take, whole (its bin, count,
// sum, min and max together), however Record and Take interleave.
func (a *Accumulator) Take() *Histogram {
	h := NewHistogram(a.m)
	a.TakeInto(h)
	return h
}

// TakeInto is Take merging into h, which must be of a's mapping,
// without allocating.
func (a *Accumulator) TakeInto(h *Histogram) {
	if !h.m.Equal(a.m) {
		panic(ErrMapping)
	}
	for i := range a.stripes {
		s := &a.stripes[i]
		s.mu.Lock()
		if s.count != 0 {
			for j, n := range s.bins {
				h.bins[j] += n
			}
			clear(s.bins)
			h.count += s.count
			h.sum += s.sum
			h.min = min(h.min, s.min)
			h.max = max(h.max, s.max)
			s.count, s.sum, s.min, s.max = 0, 0, math.MaxInt64, math.MinInt64
		}
		s.mu.Unlock()
	}
}
