package alert

import (
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// settledRefresh bounds how long settled buckets are kept before they
// are read again, for writers other than Pulse's recorders, which
// publish no heartbeat.
const settledRefresh = 10 * time.Minute

// minSettle is the least time after its end that a bucket is taken as
// settled.
const minSettle = 10 * time.Second

// settled keeps the buckets an evaluation read that no recorder will add
// to any more, per precision and series, so that the next evaluation
// reads only the newer ones. A bucket is settled once it ended more than
// settle ago, twice the recorders' stale bound: a recorder still holding
// hits of it would by then be stale, and the evaluation held instead of
// read. The buckets are dropped whenever that reasoning may not hold:
// after a hold (a backlog may have landed since), when a recorder not
// heard of before appears (it may bring a spill file's old hits), when
// the lease changes hands, and every settledRefresh.
type settled struct {
	byP    map[int]map[string]*settledSeries
	filled time.Time // when it was last emptied
}

// settledSeries is one series at one precision: every bucket from first
// to last (bucket starts) was read; samples are the non-empty ones.
type settledSeries struct {
	first, last int64
	samples     []timeseries.Sample
}

// reset empties c.
func (c *settled) reset(now time.Time) {
	c.byP, c.filled = map[int]map[string]*settledSeries{}, now
}

// lookup is where a read of name at precision p, whose window starts
// with the bucket first, may start instead, and the settled samples it
// keeps from first on.
func (c *settled) lookup(p int, name string, first int64) (from int64, kept []timeseries.Sample) {
	if c == nil {
		return first, nil
	}
	s := c.byP[p][name]
	if s == nil || s.first > first || s.last < first-int64(p) {
		return first, nil
	}
	for i, x := range s.samples {
		if x.Time >= first {
			return s.last + int64(p), s.samples[i:]
		}
	}
	return s.last + int64(p), nil
}

// keep records the samples of name at p read from the bucket first on:
// those of the buckets that start before unsettled.
func (c *settled) keep(p int, name string, first int64, samples []timeseries.Sample, unsettled int64) {
	if c == nil || c.byP == nil {
		return
	}
	m := c.byP[p]
	if m == nil {
		m = map[string]*settledSeries{}
		c.byP[p] = m
	}
	last := unsettled - int64(p)
	if last < first {
		delete(m, name)
		return
	}
	n := 0
	for n < len(samples) && samples[n].Time <= last {
		n++
	}
	m[name] = &settledSeries{first: first, last: last, samples: samples[:n:n]}
}

// settleAfter is how long after its end a bucket is settled for
// recorders whose stale bound is at most bound.
func settleAfter(bound time.Duration) time.Duration { return max(2*bound, minSettle) }
