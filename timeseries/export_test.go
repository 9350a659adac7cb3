package timeseries

import "time"

// CounterName is the series name of c, for the tests of the package's
// API.
func CounterName(c *Counter) string { return c.name }

// RecordDuration records one hit in each counter and the duration d in
// their durations, as the middlewares do through series.RecordTimed.
func (r *Recorder) RecordDuration(d time.Duration, counters ...*Counter) {
	r.record(counters, d, true)
}
