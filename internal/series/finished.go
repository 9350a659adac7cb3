package series

import "time"

// MaxTimed bounds the series a Finished request is timed in, and counts a
// visitor in.
const MaxTimed = 4

// MaxCounted bounds the series a Finished request is only counted in (its
// status class and its route's).
const MaxCounted = 2

// Finished is what one finished request adds to a Recorder. Each series
// is a *timeseries.Counter of that Recorder, nil for none.
type Finished struct {
	// Duration is counted in the durations of the Timed series, which
	// each count a hit too.
	Duration time.Duration
	Timed    [MaxTimed]any
	// Counted series count a hit only.
	Counted [MaxCounted]any
	// Visitor, unless Empty, is counted in the Timed series whose bits
	// are set in Visited (bit i for Timed[i]).
	Visitor Visitor
	Visited uint8
}

// RecordFinished is how internal/track records a finished request:
// package timeseries sets it at init. It is a hook rather than a method
// so that timeseries exports nothing for it, and one call, so that a
// request takes the clock second and a recording stripe once for all its
// series; f travels by value, so the call allocates nothing.
var RecordFinished func(rec any, f Finished)
