package timeseries_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
)

// The process totals of durations through Recorder.DurationTotals: bin for
// bin the histogram of every duration recorded, whether flushed or still
// in the stripes, growing across flushes; their count is the hits total
// of a series recorded only with durations, in both write modes.
func TestDurationTotals(t *testing.T) {
	srv := redistest.Start(t)
	for _, wt := range []bool{false, true} {
		t.Run(fmt.Sprintf("writeThrough=%v", wt), func(t *testing.T) {
			srv.FlushAll()
			clock := timeseries.NewManualClock(recent())
			r := newRecorder(t, srv, timeseries.Config{Clock: clock, FlushInterval: time.Hour, WriteThrough: wt})
			timed, plain := mustCounter(t, r, "timed"), mustCounter(t, r, "plain")
			want := latency.NewHistogram(timeseries.MappingOf(r))
			for i, d := range drawn(600, 7) {
				r.RecordDuration(d, timed)
				want.Add(d)
				r.Record(plain)
				if i%100 == 99 {
					clock.Advance(time.Second)
				}
				if i == 300 {
					flush(t, r)
				}
			}
			got := durationTotals(t, r)
			if h := got["timed"]; h == nil || !h.Equal(want) {
				t.Errorf("timed: %v, want the histogram of the %d durations recorded", h, want.Count())
			}
			if h := got["plain"]; h == nil || h.Count() != 0 {
				t.Errorf("plain, recorded without durations: %v", h)
			}
			for _, tot := range r.Totals() {
				if tot.Name == "timed" && uint64(tot.Hits) != got["timed"].Count() {
					t.Errorf("hits total %d, durations total %d", tot.Hits, got["timed"].Count())
				}
			}
			flush(t, r)
			if h := durationTotals(t, r)["timed"]; !h.Equal(want) {
				t.Errorf("after a flush: %d durations, want %d", h.Count(), want.Count())
			}
		})
	}
	r := newRecorder(t, srv, timeseries.Config{DisableDurations: true, FlushInterval: time.Hour})
	r.RecordDuration(time.Millisecond, mustCounter(t, r, "hits"))
	if got := durationTotals(t, r); len(got) != 0 {
		t.Errorf("durations off: %v", got)
	}
}

func durationTotals(t *testing.T, r *timeseries.Recorder) map[string]*latency.Histogram {
	t.Helper()
	tots := r.DurationTotals()
	out := map[string]*latency.Histogram{}
	for _, tot := range tots {
		out[tot.Name] = tot.Hist
	}
	return out
}
