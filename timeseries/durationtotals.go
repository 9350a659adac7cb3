package timeseries

import (
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
)

// Process totals of durations: every duration the ledger takes (a drained
// stripe slot, or one write-through duration) is also merged into its
// series' cumulative histogram, under the Recorder's lock the ledger
// already holds. A request pays nothing for it in the default mode; a
// write-through request pays one more Histogram.Add under the lock it
// already takes. A histogram costs Mapping.Slots() counters per series
// that recorded a duration (about 190 at 5 %, 1.5 kB).

// totalOf is series id's cumulative histogram, made on first use.
func (l *ledger) totalOf(id int32) *latency.Histogram {
	for int(id) >= len(l.durationTotals) {
		l.durationTotals = append(l.durationTotals, nil)
	}
	h := l.durationTotals[id]
	if h == nil {
		h = latency.NewHistogram(l.durationMapping)
		l.durationTotals[id] = h
	}
	return h
}

// totalCopy is a copy of series id's cumulative histogram, empty when
// it took no duration yet.
func (l *ledger) totalCopy(id int32) *latency.Histogram {
	if int(id) < len(l.durationTotals) && l.durationTotals[id] != nil {
		return l.durationTotals[id].Clone()
	}
	return latency.NewHistogram(l.durationMapping)
}

// DurationTotal is one series' durations recorded by this process since
// its recorder started, written to Redis or not: the durations' side of
// Totals. Hist is a copy the caller owns.
type DurationTotal struct {
	Name string
	Hist *Histogram
}

// DurationTotals returns the duration totals of r, one per series that
// keeps durations, in the order of Totals; nil when r keeps no
// durations. It first drains what the recording stripes hold, so a
// series whose every hit came with a duration counts as many durations
// as hits once those requests have returned.
func (r *Recorder) DurationTotals() []DurationTotal {
	if r.durations == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drainLocked()
	out := make([]DurationTotal, 0, len(r.counts.all))
	for _, c := range r.counts.all {
		if !c.timed {
			continue
		}
		out = append(out, DurationTotal{Name: c.name, Hist: r.ledger.totalCopy(c.id)})
	}
	return out
}
