package timeseries

import (
	"context"
	"time"
)

// writeNow is the write-through path: the hits join pending and a round
// runs at once, unless one that started after they joined has written
// them meanwhile: calls that wait for a round in flight share the next
// one (group commit). The timed counters count d in their durations too.
func (r *Recorder) writeNow(sec int64, timed []*Counter, d time.Duration, counted []*Counter) {
	r.mu.Lock()
	for _, c := range timed {
		c.moveLocked(r.ledger, sec, 1)
		if c.timed {
			r.ledger.addDuration(c.id, sec, d)
		}
		for i, t := range r.slow {
			if d <= t || c.slow == nil {
				break
			}
			if s := c.slowSeriesLocked(i); s != noSlowSeries {
				s.moveLocked(r.ledger, sec, 1)
			}
		}
	}
	for _, c := range counted {
		c.moveLocked(r.ledger, sec, 1)
	}
	want := r.ledger.nextRound()
	skip := r.closed || r.clock.Now().Before(r.status.retryAt)
	r.mu.Unlock()
	if skip {
		return
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	done := r.ledger.hasWritten(want)
	if !done {
		r.drainLocked() // the rings' hits go along, as in a flush
	}
	r.mu.Unlock()
	if done {
		return // the round another call ran while this one waited took them
	}
	out, err := r.round(context.Background())
	if err != nil {
		r.failed(err)
		return
	}
	r.succeeded(out.wrote)
}
