package timeseries

import (
	"math"
	"sync"
	"sync/atomic"
)

// A Counter keeps the hits of the last ringSize seconds in memory, in
// each of numStripes stripes. A slot reused for a newer second hands its
// count to pending first, so a late flusher loses nothing; the ring only
// needs to be long enough that this is rare.
const (
	ringSize   = 8
	numStripes = 8
)

// Counter is one series, made by Recorder.Counter and counted by
// Recorder.Record or Inc. Either is an atomic add on the slot of the
// current second in one of several stripes, so that cores recording at
// once rarely write the same cache line: no lock, no allocation, no Redis.
type Counter struct {
	rec   *Recorder
	id    int32
	name  string
	rings [numStripes]ring
	// moved counts the hits that left the ring (to pending, or written at
	// once in write-through mode): with the ring's contents, the total.
	moved atomic.Int64
	// timed is set when the series keeps durations; durations[i] is its slot
	// in stripe i of the Recorder's durations, guarded by that stripe.
	timed     bool
	durations [maxDurationStripes]*durationSlot
	// slow[i] counts the requests timed here slower than the recorder's
	// i-th slow threshold (nil until the first one).
	slow slowSlots
}

type ring struct {
	slots [ringSize]slot // 128 bytes: two cache lines
}

type slot struct {
	sec atomic.Int64
	n   atomic.Int64
}

const emptySlot = math.MinInt64

// Inc records one hit now: r.Record(c) for the recorder r that made c.
func (c *Counter) Inc() { c.rec.Record(c) }

// stripe names one of the numStripes stripes of every Counter.
type stripe struct{ index uint32 }

// stripeLock guards what a request records under a lock in one stripe:
// its durations and its visitor. One lock for both, since a request
// records both; each on its own cache line.
type stripeLock struct {
	sync.Mutex
	_ [56]byte
}

// stripes hands out stripes so that each P mostly keeps one of its own:
// sync.Pool caches per P, so a goroutine usually gets back the stripe its
// P used last, and two cores rarely add to the same cache line. A random
// stripe per call would make them collide and bounce lines between
// cores. New hands out pointers into a fixed array: it never allocates.
var (
	stripeSet  [numStripes]stripe
	nextStripe atomic.Uint32
	stripes    = sync.Pool{New: func() any { return &stripeSet[nextStripe.Add(1)%numStripes] }}
)

func init() {
	for i := range stripeSet {
		stripeSet[i].index = uint32(i)
	}
}

func (c *Counter) add(si uint32, sec, n int64) {
	s := &c.rings[si].slots[uint64(sec)%ringSize]
	if s.sec.Load() == sec {
		s.n.Add(n)
		return
	}
	// A new second for this slot: move what the slot holds to pending
	// under the lock so the flusher sees every hit with its own second.
	r := c.rec
	r.mu.Lock()
	if s.sec.Load() != sec {
		if old := s.n.Swap(0); old != 0 {
			c.moveLocked(r.ledger, s.sec.Load(), old)
		}
		s.sec.Store(sec)
	}
	s.n.Add(n)
	r.mu.Unlock()
}

// ringHits is what c's ring holds now.
func (c *Counter) ringHits() int64 {
	var n int64
	for i := range c.rings {
		for j := range c.rings[i].slots {
			n += c.rings[i].slots[j].n.Load()
		}
	}
	return n
}
