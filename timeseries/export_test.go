package timeseries

import (
	"context"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
)

// MappingOf is the mapping r bins durations by; nil with durations off.
func MappingOf(r *Recorder) *latency.Mapping {
	if r.durations == nil {
		return nil
	}
	return r.durations.m
}

// MaxVisitorBuckets bounds the buckets of one read of visitors.
const MaxVisitorBuckets = maxVisitorBuckets

// CounterName is the series name of c, for the tests of the package's
// API.
func CounterName(c *Counter) string { return c.name }

// RecordDuration records one hit in each counter and the duration d in
// their durations, through the path of RecordRequest, for any number of
// counters.
func (r *Recorder) RecordDuration(d time.Duration, counters ...*Counter) {
	r.record(counters, nil, d, nil)
}

// RecordDurations records n requests of duration d in c at once, as n
// calls of RecordDuration would after the request path's stripes: the
// memory test fills a day's buckets this way, with counts drawn per bin.
func (r *Recorder) RecordDurations(c *Counter, d time.Duration, n int64) {
	sec := r.counts.second()
	m := r.durations.m
	bins := make([]uint32, m.Slots())
	bins[m.Slot(d)] = uint32(n)
	r.mu.Lock()
	c.moveLocked(r.ledger, sec, n)
	r.ledger.addDurations(c.id, sec, bins, int64(d)*n, d, d)
	r.mu.Unlock()
}

// AddVisitors records the visitors ids in c at the clock's second, as
// many requests would after hashing: the memory test fills months of
// buckets this way without hashing millions of addresses.
func (r *Recorder) AddVisitors(c *Counter, ids []uint64) {
	sec := r.counts.second()
	step := sec - sec%r.visitors.step
	s := &r.visitors.stripes[0]
	r.counts.locks[0].Lock()
	for _, id := range ids {
		s.add(c.id, step, sec, id)
	}
	r.counts.locks[0].Unlock()
}

// SendLost takes a round's batches as a flush does and makes their script
// calls, but sends nothing: the batches are left as after a send whose
// replies were lost, to be resent as they are. deliver sends the calls,
// as a network would deliver them late, and drops the replies.
func (r *Recorder) SendLost() (deliver func()) {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.sender.refreshPlan()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drainLocked()
	batches, _, _, _ := r.ledger.takeRound()
	cmds := make([]redisconn.Cmd, len(batches))
	for i, b := range batches {
		cmds[i] = r.sender.call(b)
		r.ledger.fail(b, true)
	}
	return func() { r.sender.router.Do(cmds, redisconn.Options{Timeout: 5 * time.Second}) }
}

// FlushRound runs one round of a flush: each marker's batch sent once.
func (r *Recorder) FlushRound(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	r.drainLocked()
	r.mu.Unlock()
	_, err := r.round(ctx)
	return err
}

// OneNodeAtATime makes r send its nodes' calls one after the other: see
// redisconn.Router.OneNodeAtATime.
func (r *Recorder) OneNodeAtATime() { r.sender.router.OneNodeAtATime() }
