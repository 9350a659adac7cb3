package timeseries_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// The background flush runs when the clock passes FlushInterval, not when
// real time does.
func TestFlushTickerRunsOnTheClock(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	const interval = 20 * time.Millisecond
	r := newRecorder(t, srv, timeseries.Config{Clock: clock, FlushInterval: interval})
	c := mustCounter(t, r, "hits")
	for range 5 {
		c.Inc()
	}
	time.Sleep(15 * interval) // a ticker on real time would have flushed
	if got := srv.HashSum("count:5:hits"); got != 0 {
		t.Fatalf("%d hits flushed before the clock moved", got)
	}
	clock.Advance(interval)
	waitFor(t, func() bool { return srv.HashSum("count:5:hits") == 5 })
	// Health follows once the flush has read Redis's reply, a moment
	// after the hits are in.
	waitFor(t, func() bool { return !r.Health().LastFlush.IsZero() })
	if h := r.Health(); h.PendingHits != 0 || !h.LastFlush.Equal(t0.Add(interval)) {
		t.Errorf("health after the ticked flush = %+v", h)
	}
}

// Close waits between its attempts on the clock: while the clock stands
// still it does not retry, and moving it lets Close finish.
func TestCloseRetriesOnTheClock(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	var errs atomic.Int64
	var mu sync.Mutex
	var seen []string
	r := newRecorder(t, srv, timeseries.Config{
		Clock: clock, FlushTimeout: 200 * time.Millisecond,
		OnError: func(err error) {
			mu.Lock()
			seen = append(seen, err.Error())
			mu.Unlock()
			errs.Add(1)
		},
	})
	// The salts are first fetched in the background at start, and a
	// fetch that meets the stopped server is an error too: a Flush waits
	// for it.
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustCounter(t, r, "hits").Inc()
	srv.Stop()
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		closed <- r.Close(ctx)
	}()
	waitFor(t, func() bool { return errs.Load() == 1 })
	time.Sleep(500 * time.Millisecond) // five retries, were Close waiting on real time
	if n := errs.Load(); n != 1 {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("Close tried %d times while the clock stood still, want 1: %q", n, seen)
	}
	srv.Restart()
	for {
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
			assertSums(t, srv, "", "hits", 1)
			return
		case <-time.After(10 * time.Millisecond):
			clock.Advance(100 * time.Millisecond)
		}
	}
}
