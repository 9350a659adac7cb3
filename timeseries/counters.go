package timeseries

import (
	"sync/atomic"
)

// counters is the Recorder's part on the request path: the series it made,
// each a Counter whose rings hold the hits of the last seconds, the cap on
// their names, the request path's lock stripes and the second a hit is
// stamped with. Recording touches only this (and, past a second's end, the
// ledger under the Recorder's lock); the flush drains it into the ledger.
type counters struct {
	// locks come first: each is on a cache line of its own, and what
	// precedes them in the Recorder is read only.
	locks    [numStripes]stripeLock
	maxNames int

	// Guarded by the Recorder's mu.
	names    map[string]*Counter
	all      []*Counter // by id: in the order they were made
	overflow *Counter

	refused atomic.Int64 // names refused by the cap

	// now is the current unix second when coarse (the clock is the
	// system clock): the flusher's timer advances it at each second
	// boundary, because reading the time costs more than the rest of a
	// record together. Otherwise clock is read.
	now    atomic.Int64
	coarse bool
	clock  Clock
}

// second is the unix second to stamp a hit with.
func (cs *counters) second() int64 {
	if cs.coarse {
		return cs.now.Load()
	}
	return cs.clock.Now().Unix()
}

// lookupLocked is the series called name when it exists, the overflow
// series when the cap refuses a new name (counting the refusal), or nil
// when name is to be made.
func (cs *counters) lookupLocked(name string) *Counter {
	if c, ok := cs.names[name]; ok {
		return c
	}
	if cs.overflow != nil && name == cs.overflow.name {
		return cs.overflow
	}
	if len(cs.names) >= cs.maxNames {
		cs.refused.Add(1)
		return cs.overflow
	}
	return nil
}

// drainLocked moves every counter's ring into the ledger l.
func (cs *counters) drainLocked(l *ledger) {
	for _, c := range cs.all {
		for i := range c.rings {
			for j := range c.rings[i].slots {
				s := &c.rings[i].slots[j]
				if s.n.Load() == 0 {
					continue
				}
				if n := s.n.Swap(0); n != 0 {
					c.moveLocked(l, s.sec.Load(), n)
				}
			}
		}
	}
}

// ringHitsLocked is what the rings of every counter hold now.
func (cs *counters) ringHitsLocked() int64 {
	var n int64
	for _, c := range cs.all {
		n += c.ringHits()
	}
	return n
}

// moveLocked hands n hits of c at second sec to the ledger l, due at
// every precision, and counts them as moved out of the ring.
func (c *Counter) moveLocked(l *ledger, sec, n int64) {
	c.moved.Add(n)
	l.add(c.id, sec, n)
}
