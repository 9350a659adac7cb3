package timeseries

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/pulse-dev/pulse/timeseries/internal/latency"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// maxDurationStripes is the stripes of a Recorder's durations: one per
// stripe of the hits.
const maxDurationStripes = numStripes

// durations holds the request durations recorded and not yet handed to
// the ledger: per stripe, per series, the second being recorded. A
// request locks its stripe once for all its series (one uncontended lock
// instead of an atomic add per bin, sum, min and max of each series) and
// computes its bin once. Counts stay per second, like hits, so a bucket
// gets exactly the durations of its seconds.
type durations struct {
	m       *latency.Mapping
	mask    uint32
	stripes [maxDurationStripes]durationStripe
}

// durationSlot is one series' durations in one second, within one stripe.
type durationSlot struct {
	counter int32
	sec     int64
	n       uint32 // one stripe, one second: far below 2³²
	sum     int64
	lo, hi  time.Duration
	bins    []uint32 // by latency.Mapping.Slot
}

// durationStripe keeps, under its stripe's lock (counters.locks), the
// durationSlots of its index in every Counter, the slots a request moved past
// (sealed) and emptied ones to reuse (free), so a request allocates
// nothing once the stripe is warm.
type durationStripe struct {
	sealed []*durationSlot
	free   []*durationSlot
}

// newDurations keeps a stripe per stripe of the hits (numStripes), so two
// Ps recording at once never share a lock; a series only has slots in the
// stripes its requests used, so idle stripes cost nothing.
func newDurations(m *latency.Mapping) *durations {
	return &durations{m: m, mask: maxDurationStripes - 1}
}

// newDurationMapping checks the duration fields of cfg and returns their
// mapping, or nil when durations are off.
func newDurationMapping(cfg Config) (*latency.Mapping, error) {
	if cfg.DisableDurations {
		return nil, nil
	}
	m, err := latency.NewMapping(latency.Config{Accuracy: cfg.DurationAccuracy, Min: cfg.DurationMin, Max: cfg.DurationMax})
	if err != nil {
		return nil, fmt.Errorf("timeseries: durations: %w", err)
	}
	return m, nil
}

// recordLocked counts d once in each timed series of cs, at second sec,
// in stripe si, whose lock (counters.locks) the caller holds.
func (ds *durations) recordLocked(si uint32, sec int64, d time.Duration, cs []*Counter) {
	slot := ds.m.Slot(d)
	d = max(d, 0)
	i := si & ds.mask
	st := &ds.stripes[i]
	for _, c := range cs {
		if !c.timed {
			continue
		}
		s := c.durations[i]
		if s == nil || s.sec != sec {
			s = st.slotFor(ds.m, c, i, sec)
		}
		s.bins[slot]++
		s.n++
		s.sum += int64(d)
		s.lo = min(s.lo, d)
		s.hi = max(s.hi, d)
	}
}

// slotFor gives c a slot for second sec in stripe i, sealing the one it
// had for another second. The stripe's lock is held.
func (st *durationStripe) slotFor(m *latency.Mapping, c *Counter, i uint32, sec int64) *durationSlot {
	s := c.durations[i]
	if s != nil && s.n == 0 {
		s.sec = sec
		return s
	}
	if s != nil {
		st.sealed = append(st.sealed, s)
	}
	if k := len(st.free); k > 0 {
		s = st.free[k-1]
		st.free = st.free[:k-1]
	} else {
		s = &durationSlot{bins: make([]uint32, m.Slots())}
		s.reset()
	}
	s.counter, s.sec = c.id, sec
	c.durations[i] = s
	return s
}

func (s *durationSlot) reset() {
	clear(s.bins)
	s.n, s.sum, s.lo, s.hi = 0, 0, math.MaxInt64, math.MinInt64
}

// drainLocked hands every recorded duration to the ledger, under the
// Recorder's lock: the sealed slots and those of the current seconds.
// Each slot leaves its stripe under the stripe's lock, so every
// duration lands, whole, in exactly one drain.
func (ds *durations) drainLocked(cs *counters, l *ledger) {
	for i := range ds.mask + 1 {
		st, mu := &ds.stripes[i], &cs.locks[i]
		mu.Lock()
		taken := st.sealed
		st.sealed = nil
		for _, c := range cs.all {
			if s := c.durations[i]; s != nil && s.n > 0 {
				taken = append(taken, s)
				c.durations[i] = nil
			}
		}
		mu.Unlock()
		if len(taken) == 0 {
			continue
		}
		for _, s := range taken {
			l.addDurations(s.counter, s.sec, s.bins, s.sum, s.lo, s.hi)
			s.reset()
		}
		mu.Lock()
		st.free = append(st.free, taken...)
		mu.Unlock()
	}
}

// timedKeys are the lat key prefixes of a series at each precision, or
// nil when its name cannot have durations (series.LatKeyPrefix).
func timedKeys(schema series.Keys, name string) []string {
	var out []string
	for _, p := range schema.Precisions {
		l, ok := schema.LatKeyPrefix(p, name)
		if !ok {
			return nil
		}
		out = append(out, l)
	}
	return out
}

// gcdOf is the greatest common divisor of the precisions: seconds with
// the same multiple of it fall in the same bucket at every precision, so
// pending durations are kept per such step instead of per second.
func gcdOf(ps []int) int64 {
	g := 0
	for _, p := range ps {
		for a, b := g, p; ; {
			if b == 0 {
				g = a
				break
			}
			a, b = b, a%b
		}
	}
	return int64(cmp.Or(g, 1))
}
