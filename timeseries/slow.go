package timeseries

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// MaxSlowThresholds bounds Config.SlowThresholds: each one is a series
// more for every series a request is timed in.
const MaxSlowThresholds = 8

// SlowSeries is the series that counts the requests of series name that
// took longer than threshold, for a Recorder whose Config.SlowThresholds
// has it: SlowSeries("GET /posts/:id", 500*time.Millisecond) is
// "slow:500ms GET /posts/:id". It is a series like any other, in the
// count hashes and the known set; its prefix keeps it apart from the
// routes and their status classes.
func SlowSeries(name string, threshold time.Duration) string {
	return "slow:" + ThresholdText(threshold) + " " + name
}

// ParseSlowSeries reads a name SlowSeries wrote: the series whose slow
// requests it counts and the threshold. ok is false for any other name.
func ParseSlowSeries(name string) (series string, threshold time.Duration, ok bool) {
	rest, found := strings.CutPrefix(name, "slow:")
	if !found {
		return "", 0, false
	}
	text, series, found := strings.Cut(rest, " ")
	if !found || series == "" {
		return "", 0, false
	}
	threshold, err := time.ParseDuration(text)
	if err != nil || threshold <= 0 || ThresholdText(threshold) != text {
		return "", 0, false
	}
	return series, threshold, true
}

// ThresholdText is how SlowSeries writes a threshold: Go's duration text
// without its zero tails ("500ms", "1s", "1.5s", "2m", "1h30m").
func ThresholdText(t time.Duration) string {
	s := t.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

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
