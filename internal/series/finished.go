package series

import (
	"fmt"
	"time"
)

// MaxTimed bounds the series a Finished request is timed in, and counts a
// visitor in.
const MaxTimed = 4

// MaxCounted bounds the series a Finished request is only counted in (its
// status class and its route's).
const MaxCounted = 2

// Finished is what one finished request adds to a Recorder. C is
// *timeseries.Counter, which this package cannot name; nil entries are
// no series.
type Finished[C comparable] struct {
	// Duration is counted in the durations of the Timed series, which
	// each count a hit too.
	Duration time.Duration
	Timed    [MaxTimed]C
	// Counted series count a hit only.
	Counted [MaxCounted]C
	// Visitor, unless Empty, is counted in the Timed series whose bits
	// are set in Visited (bit i for Timed[i]).
	Visitor Visitor
	Visited uint8
}

// RecordFinished is how internal/track records a finished request. Package
// timeseries sets it at init to a
// func(*timeseries.Recorder, Finished[*timeseries.Counter]), and track
// takes it typed, once, through FinishedHook. It is a hook rather than a
// method so that timeseries exports nothing for it, and one call, so that
// a request takes the clock second and a recording stripe once for all
// its series; the Finished travels by value, so the call allocates
// nothing, and typed, so no series is an interface to unwrap.
var RecordFinished any

// FinishedHook returns RecordFinished as the func it is; it panics if
// package timeseries did not set it, or set another type.
func FinishedHook[R any, C comparable]() func(R, Finished[C]) {
	return hook[func(R, Finished[C])]("RecordFinished", RecordFinished)
}

// Kept is what a Recorder keeps besides hits.
type Kept struct {
	// Durations: with them off a request reads no clock.
	Durations bool
	// Visitors: with them off a request's visitor is never worked out
	// (its address parsed, the app's VisitorID hook called).
	Visitors bool
}

// Keeps is how internal/track learns what a Recorder keeps:
// func(*timeseries.Recorder) Kept, set by package timeseries like
// RecordFinished, and taken typed through KeepsHook.
var Keeps any

// KeepsHook returns Keeps as the func it is; it panics if package
// timeseries did not set it, or set another type.
func KeepsHook[R any]() func(R) Kept {
	return hook[func(R) Kept]("Keeps", Keeps)
}

// hook returns the hook named name, set to v, as the F it must be; it
// panics if package timeseries did not set it, or set another type.
func hook[F any](name string, v any) F {
	f, ok := v.(F)
	if !ok {
		panic(fmt.Sprintf("series: %s is %T", name, v))
	}
	return f
}
