package timeseries

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// MaxSlowThresholds bounds Config.SlowThresholds: each one is a series
// more for every series a request is timed in.
const MaxSlowThresholds = 8

// slowThresholds checks cfg.SlowThresholds and returns them ascending,
// each once.
func slowThresholds(cfg Config) ([]time.Duration, error) {
	ts := slices.Clone(cfg.SlowThresholds)
	slices.Sort(ts)
	ts = slices.Compact(ts)
	switch {
	case len(ts) == 0:
		return nil, nil
	case cfg.DisableDurations:
		return nil, errors.New("timeseries: SlowThresholds needs durations: DisableDurations is set")
	case ts[0] <= 0:
		return nil, fmt.Errorf("timeseries: SlowThresholds: %v is not above 0", ts[0])
	case len(ts) > MaxSlowThresholds:
		return nil, fmt.Errorf("timeseries: SlowThresholds: %d thresholds, at most %d", len(ts), MaxSlowThresholds)
	}
	return ts, nil
}

// SlowThresholds are the durations r counts slower requests at
// (Config.SlowThresholds), ascending.
func (r *Recorder) SlowThresholds() []time.Duration { return slices.Clone(r.slow) }

// noSlowSeries stands for a slow series that cannot be made: its name,
// the prefix added, is too long. It is never counted.
var noSlowSeries = &Counter{}

// countSlow adds a hit at second sec, in stripe si, to the slow series
// of each of timed for every threshold d is above: for most requests one
// comparison.
func (r *Recorder) countSlow(si uint32, sec int64, d time.Duration, timed []*Counter) {
	if len(r.slow) == 0 || d <= r.slow[0] {
		return
	}
	for _, c := range timed {
		if c.slow == nil {
			continue // a series made to count slow requests itself
		}
		for i, t := range r.slow {
			if d <= t {
				break
			}
			if s := c.slowSeries(i); s != noSlowSeries {
				s.add(si, sec, 1)
			}
		}
	}
}

// slowSeries is c's series of the requests slower than its recorder's
// i-th threshold, made on first use.
func (c *Counter) slowSeries(i int) *Counter {
	if s := c.slow[i].Load(); s != nil {
		return s
	}
	c.rec.mu.Lock()
	defer c.rec.mu.Unlock()
	return c.slowSeriesLocked(i)
}

// slowSeriesLocked is slowSeries under the Recorder's lock. The series
// are not held to Config.MaxNames: there are at most as many as the
// named series times the thresholds.
func (c *Counter) slowSeriesLocked(i int) *Counter {
	if s := c.slow[i].Load(); s != nil {
		return s
	}
	r := c.rec
	name := SlowSeries(c.name, r.slow[i])
	s := noSlowSeries
	if ValidateName(name) == nil {
		if s = r.counts.names[name]; s == nil {
			s = r.newCounterLocked(name, false)
			r.counts.names[name] = s
		}
	}
	c.slow[i].Store(s)
	return s
}

// slowSlots are a Counter's slow series, one per threshold of its
// recorder; nil without thresholds.
type slowSlots []atomic.Pointer[Counter]
