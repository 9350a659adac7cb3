package adapter

import "time"

// monoBase anchors Start: a time.Since of it reads only the monotonic
// clock, where time.Now reads the wall clock too. A duration needs no
// wall time, and on a virtual machine each clock read is a visible part
// of what a request pays Pulse.
var monoBase = time.Now()

// Start is when a request began, on the monotonic clock: tracker.Begin.
type Start time.Duration

// now is the Start of a request beginning now.
func now() Start { return Start(time.Since(monoBase)) }

// since is the time since s.
func (s Start) since() time.Duration { return time.Since(monoBase) - time.Duration(s) }

// Begin returns the Start of a request beginning now, or 0 without
// reading the clock when the Recorder keeps no durations. An adapter
// calls it before the handler chain runs, and Elapsed after.
func (t *tracker) Begin() Start {
	if !t.durations {
		return 0
	}
	return now()
}

// Visits reports whether the Recorder counts unique visitors: an adapter
// works out a request's Visitor only then, so that with visitors off no
// address is parsed and the app's VisitorID hook is never called.
func (t *tracker) visits() bool { return t.visitors }

// Elapsed is the time since s, or 0 without reading the clock when the
// Recorder keeps no durations.
func (t *tracker) Elapsed(s Start) time.Duration {
	if !t.durations {
		return 0
	}
	return s.since()
}
