package timeseries

import "github.com/pulse-dev/pulse/timeseries/internal/series"

// roundBuilder gathers the new batches of one take, one per marker: per
// flush group, or on a cluster per node, whose groups (slots) share it.
type roundBuilder struct {
	l        *ledger
	fresh    map[int]*building    // by group
	byMarker map[string]*building // the same batches, by marker
	blocked  map[int]bool         // groups whose marker has a batch in flight
	leftover bool
	// shut are the markers that can take nothing more this round: their
	// new batch is full, or a batch of theirs is in flight. Once every
	// marker that may have pending entries is shut (open reaches 0), the
	// round stops walking pending: else each round of a long catch-up
	// would walk all of it, and a flush of many series would cost the
	// square of their number.
	shut       map[string]bool
	candidates map[string]bool // the markers that may have pending entries
	open       int             // candidates not shut
	stopped    bool            // the walk stopped before its end
}

// shutMarker records that marker m takes nothing more this round.
func (r *roundBuilder) shutMarker(m string) {
	if r.shut[m] {
		return
	}
	if r.shut == nil {
		r.shut = map[string]bool{}
		r.candidates = r.l.waiting // counted only once a marker shuts
		if r.candidates == nil {
			r.candidates = r.l.markersInUse()
		}
		r.open = len(r.candidates)
	}
	r.shut[m] = true
	if r.candidates[m] {
		r.open--
	}
}

// saturated reports whether every marker that may have pending entries
// is shut. Where the candidates are out of date (the slot map changed),
// stopping early only leaves more for the next round.
func (r *roundBuilder) saturated() bool {
	if r.shut == nil || r.open > 0 {
		return false
	}
	r.stopped = true
	return true
}

// walked records, after a walk of all pending, which markers hold what
// is left: those shut this round. Until pending grows, the rounds after
// need no more of them shut to stop.
func (r *roundBuilder) walked() {
	if !r.stopped {
		r.l.waiting = r.shut
		if r.shut == nil {
			r.l.waiting = map[string]bool{}
		}
	}
}

// takePending moves every pending entry it can into the round's batches.
func (r *roundBuilder) takePending() {
	l := r.l
	// Entries left with fewer bits are put back after the loop: a key
	// added to a map while ranging over it may be visited again.
	var partial map[pendingKey]int64
	for k, n := range l.pending {
		if r.saturated() {
			break // r.leftover was set as the last marker shut
		}
		l.visited++
		left := r.takeEntry(k, n)
		if left == k.due {
			continue
		}
		delete(l.pending, k)
		if left != 0 {
			if partial == nil {
				partial = map[pendingKey]int64{}
			}
			partial[pendingKey{counter: k.counter, sec: k.sec, due: left}] += n
		}
	}
	for k, n := range partial {
		l.pending[k] += n
	}
}

// takeEntry adds the n hits of k to the batch of each precision's group
// that can take them, and returns the precision bits still due.
func (r *roundBuilder) takeEntry(k pendingKey, n int64) (left uint32) {
	l := r.l
	s := &l.series[k.counter]
	left = k.due
	for i, prec := range l.schema.Precisions {
		bit := uint32(1) << i
		if k.due&bit == 0 {
			continue
		}
		bl := r.batchFor(s.groups[i])
		if bl == nil {
			continue
		}
		dk := deltaKey{counter: k.counter, prec: int8(i), bucket: series.BucketStart(k.sec, prec)}
		if !bl.add(dk, s.keys[i], s.members[i], n) {
			r.leftover = true // the next round takes the rest
			r.shutMarker(bl.b.Marker)
			continue
		}
		b := bl.b
		b.Newest = max(b.Newest, k.sec)
		b.src[pendingKey{counter: k.counter, sec: k.sec, due: bit}] += n
		left &^= bit
	}
	return left
}

// batchFor is the round's new batch for group g, started on first use
// of g's marker, or nil while that marker has a batch in flight.
func (r *roundBuilder) batchFor(g int) *building {
	if bl, ok := r.fresh[g]; ok {
		return bl
	}
	l := r.l
	if r.blocked[g] {
		r.leftover = true
		return nil
	}
	m, node := l.markerOf(g)
	if bl, ok := r.byMarker[m]; ok {
		r.fresh[g] = bl
		return bl
	}
	if _, busy := l.outstanding[m]; busy {
		r.blocked[g] = true // waits for the marker's batch in flight
		r.leftover = true
		r.shutMarker(m)
		return nil
	}
	l.seq++
	bl := &building{b: &batch{Marker: m, Seq: l.seq, Node: node, src: map[pendingKey]int64{}}, deltas: map[deltaKey]int{}}
	r.fresh[g] = bl
	r.byMarker[m] = bl
	l.outstanding[m] = bl.b
	return bl
}
