package alert

import (
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// healthMark is what the previous evaluation saw of the recorder, to
// tell drops that happened since.
type healthMark struct {
	dropped int64
	at      time.Time
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
	mark := healthMark{dropped: dropped, at: now}
	if e.mem.lastHealth == nil {
		e.mem.lastHealth = &mark
	}
	for i := range e.local {
		r := &e.local[i]
		o := newObservation(r, "", r.Severity)
		o.Labels["instance"] = e.cfg.Instance
		o.Key += "\x00" + e.cfg.Instance
		e.healthBreach(&o, r, h, mark, *e.mem.lastHealth)
		s := e.mem.local[o.Key]
		if s == nil {
			s = &Status{Key: o.Key}
			e.mem.local[o.Key] = s
		}
		from := s.State
		if s.step(o, r, now, "", 0) { // health is this instance's own, in memory
			e.logLocalLocked(Transition{At: now, Key: s.Key, Rule: s.Rule, Labels: cloneLabels(s.Labels), From: from, To: s.State, Value: s.Value})
		}
	}
	e.mem.lastHealth = &mark
	e.notifyLocked(e.mem.local, e.mem.localSent, 0, now)
}

// logLocalLocked keeps a Health alert's transition in memory, newest
// first, as Redis keeps the others': the handler shows both.
func (e *Evaluator) logLocalLocked(t Transition) {
	e.mem.localLog = append([]Transition{t}, e.mem.localLog...)
	if len(e.mem.localLog) > e.cfg.History {
		e.mem.localLog = e.mem.localLog[:e.cfg.History]
	}
}

// healthBreach fills o with one Health rule's reading of the recorder:
// whether it is breached, its value and threshold with their unit, and
// the window the value was read over. prev is the previous evaluation's
// mark, cur this one's.
func (e *Evaluator) healthBreach(o *observation, r *Rule, h timeseries.Health, cur, prev healthMark) {
	now := cur.at
	lastOK := h.LastFlushOK
	if lastOK.IsZero() {
		lastOK = e.startedAt
	}
	age := max(now.Sub(lastOK), 0)
	switch r.Check {
	case RedisDown:
		// Value: how long since a flush last ended well; the window is
		// the latest flush's.
		o.Window, o.Unit, o.Value = h.FlushInterval, "s", age.Seconds()
		o.Breached = !h.RedisUp && !h.LastErrorAt.IsZero() // failed, not merely not flushed yet
	case Dropped:
		o.Window, o.Unit = now.Sub(prev.at), "drops"
		if o.Window <= 0 {
			o.Window = e.cfg.Interval
		}
		o.Value = float64(cur.dropped - prev.dropped)
		o.Breached = o.Value > 0
	case FlushStalled:
		o.Window, o.Unit, o.Value, o.Threshold = r.Quiet.Std(), "s", age.Seconds(), r.Quiet.Std().Seconds()
		o.Breached = age > r.Quiet.Std()
	}
}
