package alert

import (
	"context"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestSettledBuckets: an evaluation reads again only the buckets that
// may still change; what it read before gives the same burn rates. A
// count added to a bucket that ended more than the settling time ago,
// which no recorder adds to once its heartbeat is fresh, is seen after a
// hold, after a recorder not heard of before appears, or after
// settledRefresh; one added within the settling time is seen at once.
// The clock is fixed far from the wall clock: nothing here expires.
func TestSettledBuckets(t *testing.T) {
	t.Parallel()
	errs := errorSeries(App)
	cases := []struct {
		name string
		// late adds 5xx answers to a bucket of the past and moves the
		// world on; seen says whether the next evaluation sees them.
		late func(t *testing.T, srv *redistest.Server, clock *timeseries.ManualClock, e *Evaluator)
		seen bool
	}{
		{"within the settling time", func(_ *testing.T, srv *redistest.Server, clock *timeseries.ManualClock, _ *Evaluator) {
			lateErrors(srv, errs, clock.Now().Unix()-5, 3000)
		}, true},
		{"into a settled bucket, unannounced", func(_ *testing.T, srv *redistest.Server, clock *timeseries.ManualClock, _ *Evaluator) {
			lateErrors(srv, errs, clock.Now().Unix()-20*60, 3000)
		}, false},
		{"into a settled bucket, then a hold", func(t *testing.T, srv *redistest.Server, clock *timeseries.ManualClock, e *Evaluator) {
			writeBeats(t, srv, clock.Now(), []beat{{id: "b", at: 30, flushedAt: 30}})
			e.tick(context.Background())
			if e.Health().ResolvesHeld == "" {
				t.Fatal("resolves not held for a stale instance")
			}
			lateErrors(srv, errs, clock.Now().Unix()-20*60, 3000) // its backlog
			writeBeats(t, srv, clock.Now(), []beat{{id: "b", at: 0, flushedAt: 0}})
		}, true},
		{"into a settled bucket by a recorder new here", func(t *testing.T, srv *redistest.Server, clock *timeseries.ManualClock, _ *Evaluator) {
			lateErrors(srv, errs, clock.Now().Unix()-20*60, 3000) // a spill file's
			writeBeats(t, srv, clock.Now(), []beat{{id: "new", at: 0, flushedAt: 0}})
		}, true},
		{"into a settled bucket, read again in time", func(_ *testing.T, srv *redistest.Server, clock *timeseries.ManualClock, e *Evaluator) {
			lateErrors(srv, errs, clock.Now().Unix()-20*60, 3000)
			e.cache.filled = e.cache.filled.Add(-settledRefresh)
		}, true},
	}
	srv := redistest.Start(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv.FlushAll()
			steadyTraffic(App, 10, 50).write(t, srv.Pool())
			clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
			cp := &countingPool{p: srv.Pool()}
			e, err := New(Config{Pool: cp, Clock: clock, Instance: "a", Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App}}})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			ctx := context.Background()
			e.tick(ctx)
			full := cp.buckets.Load()
			clock.Advance(time.Second)
			cp.buckets.Store(0)
			e.tick(ctx)
			if got := cp.buckets.Load(); got > full/4 {
				t.Errorf("%d buckets read again, of %d: want only those that may change", got, full)
			}
			if v, whole := pageValue(e), wholeValue(t, srv, clock); v != whole {
				t.Fatalf("burn rate %v from the settled buckets, %v read whole", v, whole)
			}
			c.late(t, srv, clock, e)
			clock.Advance(time.Second)
			e.tick(ctx)
			if h := e.Health(); h.DataMissing || h.LastError != "" {
				t.Fatalf("%+v", h)
			}
			if v, whole := pageValue(e), wholeValue(t, srv, clock); (v == whole) != c.seen {
				t.Errorf("burn rate %v, read whole %v: the late errors seen %v, want %v", v, whole, v == whole, c.seen)
			}
		})
	}
}

// lateErrors adds n 5xx answers to the buckets of name holding at, at
// every precision, as a late flush would.
func lateErrors(srv *redistest.Server, name string, at, n int64) {
	tr := traffic{}
	tr.add(name, at, n)
	for key, fields := range tr {
		for f, v := range fields {
			srv.Do("HINCRBY", key, f, v)
		}
	}
}

// wholeValue is the SLO's page alert's value at the clock's time, every
// bucket read.
func wholeValue(t *testing.T, srv *redistest.Server, clock *timeseries.ManualClock) float64 {
	rule := Rule{Name: "SLO", Kind: Availability, Series: App}.WithDefaults()
	return observeOnce(t, srv.Pool(), []Rule{rule}, clock.Now(), nil)["SLO\x00page\x00hits"].Value
}

// pageValue is the SLO's page alert's value, as the evaluator holds it.
func pageValue(e *Evaluator) float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.mem.states["SLO\x00page\x00hits"].Value
}
