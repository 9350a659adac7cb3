package timeseries

import "github.com/pulse-dev/pulse/timeseries/internal/visitors"

// A stripe keeps the visitors recorded since the last drain in a small
// open-addressing set keyed by (series, step, id), so a visitor making
// many requests between two flushes takes one slot, and a busy server
// neither grows nor overflows its buffer with repeats. Emptying it is one
// increment of gen: a slot is in use only when its gen is the current one.
const (
	visitorStripeMin = 1 << 10
	visitorStripeMax = 1 << 16 // slots; half of them can be used
)

// visitorStripe is guarded by its stripe's lock (counters.locks).
type visitorStripe struct {
	slots []visitorSlot
	used  []int32 // indexes of the slots in use, in insertion order
	gen   uint32
	full  int64 // visitors dropped because the stripe was full
	memo  visitors.Memo
}

// visitorSlot holds no pointer (the series is its Counter's id), so the
// garbage collector, which runs often in a busy server with a small heap,
// skips the tables instead of scanning every slot at every cycle.
type visitorSlot struct {
	step    int64
	id      uint64
	sec     int64 // the newest second it was seen in
	counter int32 // the Counter's id
	gen     uint32
}

// add records id of c at second sec (its step is sec's step). The
// stripe's lock is held.
func (s *visitorStripe) add(c int32, step, sec int64, id uint64) {
	if 2*(len(s.used)+1) > len(s.slots) {
		if len(s.slots) >= visitorStripeMax {
			if i, ok := s.find(c, step, id); ok {
				s.slots[i].sec = max(s.slots[i].sec, sec)
			} else {
				s.full++
			}
			return
		}
		s.grow()
	}
	i, ok := s.find(c, step, id)
	if ok {
		s.slots[i].sec = max(s.slots[i].sec, sec)
		return
	}
	s.slots[i] = visitorSlot{counter: c, step: step, id: id, sec: sec, gen: s.gen}
	s.used = append(s.used, int32(i))
}

// find returns the slot of (c, step, id), or the free slot it would take.
// The ids are hash outputs already, so their low bits spread well.
func (s *visitorStripe) find(c int32, step int64, id uint64) (int, bool) {
	mask := len(s.slots) - 1
	i := int((id ^ uint64(step)*0x9e3779b97f4a7c15 ^ uint64(c)*0xbf58476d1ce4e5b9) & uint64(mask))
	for {
		sl := &s.slots[i]
		if sl.gen != s.gen {
			return i, false
		}
		if sl.id == id && sl.counter == c && sl.step == step {
			return i, true
		}
		i = (i + 1) & mask
	}
}

// grow doubles the table (or makes the first one), moving the slots in
// use.
func (s *visitorStripe) grow() {
	old, oldUsed := s.slots, s.used
	n := max(2*len(old), visitorStripeMin)
	s.slots = make([]visitorSlot, n)
	s.used = make([]int32, 0, n/2)
	s.gen = 1
	for _, j := range oldUsed {
		e := old[j]
		i, _ := s.find(e.counter, e.step, e.id)
		e.gen = s.gen
		s.slots[i] = e
		s.used = append(s.used, int32(i))
	}
}

// take appends the visitors in the stripe to out and empties it. The
// stripe's lock is held.
func (s *visitorStripe) take(out []visitorSlot) []visitorSlot {
	for _, i := range s.used {
		out = append(out, s.slots[i])
	}
	s.used = s.used[:0]
	s.gen++
	if s.gen == 0 { // wrapped: stale slots could look current
		clear(s.slots)
		s.gen = 1
	}
	return out
}
