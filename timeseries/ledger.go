package timeseries

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/pulse-dev/pulse/timeseries/internal/latency"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// seriesKeys are one series' count key, known-set member and flush group
// at each precision.
type seriesKeys struct {
	keys    []string
	members []string
	groups  []int
	lat     []string // lat key prefixes; nil for a series without durations
}

// ledger is the bookkeeping of hits between the counters' rings and
// Redis: hits pending by second, the batches taken from them and not yet
// settled, spilled batches waiting their turn, and the sequence numbers
// that make each batch land once. It does no I/O and takes no lock: the
// Recorder's mutex guards it.
type ledger struct {
	schema   series.Keys
	allDue   uint32 // one bit per precision
	maxAge   int64  // seconds a hit may wait; older ones are dropped
	markerOf func(group int) (marker string, node bool)

	series      []seriesKeys
	groupsInUse map[int]bool         // every flush group of a series' keys
	pending     map[pendingKey]int64 // hits not yet in a batch
	waiting     map[string]bool      // markers of what is pending; nil: unknown, see roundBuilder.walked
	outstanding map[string]*batch    // by marker: due or sent, outcome unknown
	queued      map[string][]*batch  // spilled batches by marker, in seq order
	spillLeft   map[string]int       // spill file → its batches not yet written
	seq         int64
	takes       int64 // rounds that took pending hits into batches
	written     int64 // the last such round after which all it took was in Redis
	dropped     int64 // increments that will never reach Redis
	visited     int64 // pending entries the takes looked at: what taking costs

	durationMapping  *latency.Mapping                  // nil: no durations
	durationStep     int64                             // seconds per pending histogram
	pendingDurations map[pendingKey]*latency.Histogram // durations not yet in a batch
	droppedDurations int64                             // durations × precisions never to reach Redis
	durationTotals   []*latency.Histogram              // by series id: every duration it took; see durationtotals.go
}

func newLedger(schema series.Keys, maxAge int64, markerOf func(group int) (string, bool), m *latency.Mapping) *ledger {
	return &ledger{
		durationMapping:  m,
		durationStep:     gcdOf(schema.Precisions),
		pendingDurations: map[pendingKey]*latency.Histogram{},
		schema:           schema,
		allDue:           1<<len(schema.Precisions) - 1,
		maxAge:           maxAge,
		markerOf:         markerOf,
		groupsInUse:      map[int]bool{},
		pending:          map[pendingKey]int64{},
		outstanding:      map[string]*batch{},
		queued:           map[string][]*batch{},
		spillLeft:        map[string]int{},
	}
}

// addSeries registers a series' keys and returns its number.
func (l *ledger) addSeries(s seriesKeys) int32 {
	l.series = append(l.series, s)
	for _, g := range s.groups {
		l.groupsInUse[g] = true
	}
	return int32(len(l.series) - 1)
}

// markersInUse are the markers the groups in use map to now.
func (l *ledger) markersInUse() map[string]bool {
	seen := map[string]bool{}
	for g := range l.groupsInUse {
		m, _ := l.markerOf(g)
		seen[m] = true
	}
	return seen
}

// add records n hits of series id at second sec, due at every precision.
func (l *ledger) add(id int32, sec, n int64) {
	l.pending[pendingKey{counter: id, sec: sec, due: l.allDue}] += n
	l.waiting = nil
}

// takeRound takes the batches of one send round and numbers the round,
// so that wrote can later say all it took is in Redis. took reports
// whether it took anything from pending.
func (l *ledger) takeRound() (out []*batch, leftover, took bool, round int64) {
	seq := l.seq // each new batch takes the next
	out, leftover = l.take()
	l.takes++
	return out, leftover, l.seq != seq, l.takes
}

// wrote records that everything round took, and every round before, is
// in Redis.
func (l *ledger) wrote(round int64) { l.written = max(l.written, round) }

// nextRound is the first round that can take hits added now.
func (l *ledger) nextRound() int64 { return l.takes + 1 }

// hasWritten reports whether round and those before it are in Redis.
func (l *ledger) hasWritten(round int64) bool { return l.written >= round }

// take picks the batches of one round: every outstanding batch again, the
// next spilled batch of each marker that has none, and a new batch from
// pending for each group whose marker has none. leftover says some of it
// had to wait for a later round (a group busy or full, spilled batches
// queued behind others). At most one batch per marker is in flight, so a
// later batch can never be applied before an earlier one of the same
// marker that failed.
func (l *ledger) take() (out []*batch, leftover bool) {
	for _, b := range l.outstanding {
		out = append(out, b)
	}
	out = l.takeQueued(out)
	if len(l.pending) > 0 || len(l.pendingDurations) > 0 {
		r := roundBuilder{l: l, fresh: map[int]*building{}, byMarker: map[string]*building{}, blocked: map[int]bool{}}
		r.takePending()
		if !r.saturated() {
			r.takeDurations()
		}
		r.walked()
		// The new batches are collected here, not as they start, so that
		// nothing of r but the batches flows out and its maps stay off the
		// heap. Their order did not matter: pending is a map.
		for _, bl := range r.byMarker {
			bl.finish()
			out = append(out, bl.b)
		}
		leftover = r.leftover
	}
	return out, leftover || len(l.queued) > 0
}

// takeQueued makes the next spilled batch of each idle marker outstanding.
func (l *ledger) takeQueued(out []*batch) []*batch {
	for m, q := range l.queued {
		if _, busy := l.outstanding[m]; busy || len(q) == 0 {
			continue
		}
		l.outstanding[m] = q[0]
		out = append(out, q[0])
		if len(q) == 1 {
			delete(l.queued, m)
		} else {
			l.queued[m] = q[1:]
		}
	}
	return out
}

// settle closes a batch Redis applied (or had applied before). The keys
// sr names refused took none of their increments: those are dropped and
// their keys returned. fileDone names a spill file whose batches are now
// all written.
func (l *ledger) settle(b *batch, sr scriptReply) (fileDone string, refusedKeys []string) {
	if l.outstanding[b.Marker] == b {
		delete(l.outstanding, b.Marker)
	}
	if b.file != "" {
		if l.spillLeft[b.file]--; l.spillLeft[b.file] == 0 {
			delete(l.spillLeft, b.file)
			fileDone = b.file
		}
	}
	for _, i := range sr.refused {
		l.dropped += b.Deltas[i]
		refusedKeys = append(refusedKeys, b.Keys[i])
	}
	if sr.known {
		refusedKeys = append(refusedKeys, l.schema.KnownKey())
	}
	for _, j := range sr.refusedDurations {
		l.droppedDurations += b.Lat[j].count()
		refusedKeys = append(refusedKeys, b.Lat[j].Key)
	}
	return fileDone, refusedKeys
}

// fail records a send of b that failed. A batch that surely did not land
// goes back to pending, unless it was spilled or an earlier send may have
// landed; any other stays outstanding, to be resent as it is.
func (l *ledger) fail(b *batch, maybeLanded bool) {
	if maybeLanded {
		b.uncertain = true
		return
	}
	if (len(b.src) == 0 && len(b.durationSrc) == 0) || b.uncertain {
		return
	}
	if l.outstanding[b.Marker] == b {
		delete(l.outstanding, b.Marker)
	}
	for k, n := range b.src {
		l.pending[k] += n
	}
	for _, s := range b.durationSrc {
		l.giveBackDurations(s.key, s.h)
	}
	l.waiting = nil
}

// age drops hits older than maxAge at unix second now, pending or in a
// batch of this process; spilled batches are kept: they were saved to be
// sent however late.
func (l *ledger) age(now int64) {
	cutoff := now - l.maxAge
	for k, n := range l.pending {
		if k.sec < cutoff {
			l.dropped += n * int64(bits.OnesCount32(k.due))
			delete(l.pending, k)
		}
	}
	for m, b := range l.outstanding {
		if b.Newest < cutoff && b.file == "" {
			l.dropped += b.incr
			l.droppedDurations += b.durationsN
			delete(l.outstanding, m)
		}
	}
	l.ageDurations(cutoff)
}

// queue adds the batches of spill file name, to be sent before anything
// else.
func (l *ledger) queue(name string, batches []*batch) {
	for _, b := range batches {
		b.file = name
		l.queued[b.Marker] = append(l.queued[b.Marker], b)
	}
	if len(batches) > 0 {
		l.spillLeft[name] = len(batches)
	}
	for _, q := range l.queued {
		slices.SortFunc(q, func(a, b *batch) int { return cmp.Compare(a.Seq, b.Seq) })
	}
}

// handOff empties the ledger for a spill: every batch not settled, then
// pending in new batches, and the spill files they replace. Outstanding
// and queued batches keep their marker and seq; pending gets seqs after
// them, and each marker's batches come out in seq order.
func (l *ledger) handOff() (all []*batch, files []string) {
	for m, b := range l.outstanding {
		all = append(all, b)
		all = append(all, l.queued[m]...)
		delete(l.queued, m)
	}
	for _, q := range l.queued {
		all = append(all, q...)
	}
	l.outstanding = map[string]*batch{}
	l.queued = map[string][]*batch{}
	for len(l.pending) > 0 || len(l.pendingDurations) > 0 {
		batches, _ := l.take()
		all = append(all, batches...)
		l.outstanding = map[string]*batch{}
	}
	for f := range l.spillLeft {
		files = append(files, f)
	}
	l.spillLeft = map[string]int{}
	slices.SortStableFunc(all, func(a, b *batch) int {
		return cmp.Or(cmp.Compare(a.Marker, b.Marker), cmp.Compare(a.Seq, b.Seq))
	})
	return all, files
}

// unsettledIncr is the increments not yet in Redis that the ledger holds.
func (l *ledger) unsettledIncr() int64 {
	var incr int64
	for k, n := range l.pending {
		incr += n * int64(bits.OnesCount32(k.due))
	}
	for _, b := range l.outstanding {
		incr += b.incr
	}
	for _, q := range l.queued {
		for _, b := range q {
			incr += b.incr
		}
	}
	return incr
}
