package alert

import (
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// healthMark is what the previous evaluation saw of the recorder, to
// tell drops that happened since.
type healthMark struct {
	dropped int64
}

// tickLocal evaluates the Health rules against this instance's own
// recorder. Their state is kept in memory, not in Redis: they must work
// while Redis is unreachable, and each instance has its own recorder.
func (e *Evaluator) tickLocal(now time.Time) {
	if len(e.local) == 0 {
		return
	}
	h := e.cfg.Recorder.Health()
	e.mu.Lock()
	defer e.mu.Unlock()
	dropped := h.DroppedHits + h.DroppedVisitors + h.DroppedDurations
	var newDrops int64
	if e.mem.lastHealth != nil {
		newDrops = dropped - e.mem.lastHealth.dropped
	}
	e.mem.lastHealth = &healthMark{dropped: dropped}
	for i := range e.local {
		r := &e.local[i]
		o := newObservation(r, "", r.Severity)
		o.Labels["instance"] = e.cfg.Instance
		o.Key += "\x00" + e.cfg.Instance
		o.Breached, o.Value, o.Threshold = e.healthBreach(r, h, newDrops, now)
		s := e.mem.local[o.Key]
		if s == nil {
			s = &Status{Key: o.Key}
			e.mem.local[o.Key] = s
		}
		s.step(o, r, now)
	}
	e.notifyLocked(e.mem.local, e.mem.localSent, 0, now)
}

// healthBreach is one Health rule's reading of the recorder.
func (e *Evaluator) healthBreach(r *Rule, h timeseries.Health, newDrops int64, now time.Time) (bool, float64, float64) {
	switch r.Check {
	case RedisDown:
		if h.RedisUp || h.LastErrorAt.IsZero() { // not failed, or not flushed yet
			return false, 0, 0
		}
		return true, 1, 0
	case Dropped:
		return newDrops > 0, float64(newDrops), 0
	case FlushStalled:
		last := h.LastFlushOK
		if last.IsZero() {
			last = e.startedAt
		}
		age := now.Sub(last)
		return age > r.Quiet.Std(), age.Seconds(), r.Quiet.Std().Seconds()
	}
	return false, 0, 0
}
