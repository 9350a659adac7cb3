package alert

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestBeforeTheFirstFlush: an evaluator started beside its recorder
// does not call the data missing before the recorder has had the time
// of a flush; it decides nothing until one lands, and calls the data
// missing once the first flush fails or is late. The clock is near the
// wall clock: the recorder's markers expire by Redis's.
func TestBeforeTheFirstFlush(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// recorder is the recorder's Config: its Clock is the test's
		// unless it sets one.
		recorder func(t *testing.T, srv *redistest.Server) timeseries.Config
		// then moves the world on from the first evaluation.
		then    func(t *testing.T, clock *timeseries.ManualClock, rec *timeseries.Recorder)
		missing string // in LastError after the second evaluation; "" for none
	}{
		{
			"the first flush lands",
			func(_ *testing.T, srv *redistest.Server) timeseries.Config {
				return timeseries.Config{Pool: srv.Pool()}
			},
			func(t *testing.T, clock *timeseries.ManualClock, rec *timeseries.Recorder) { flushAgain(t, clock, rec) },
			"",
		},
		{
			"the first flush fails",
			func(t *testing.T, _ *redistest.Server) timeseries.Config {
				gone := redistest.Start(t) // the recorder's own Redis, stopped
				gone.Stop()
				return timeseries.Config{Pool: gone.Pool()}
			},
			func(t *testing.T, clock *timeseries.ManualClock, rec *timeseries.Recorder) {
				hits, _ := rec.Counter(App)
				rec.Record(hits) // a flush with nothing to write asks Redis nothing
				clock.Advance(time.Second)
				waitFor(t, "a failed flush", func() bool { return !rec.Health().RedisUp })
			},
			"the recorder's latest flush failed",
		},
		{
			"no flush in time",
			func(_ *testing.T, srv *redistest.Server) timeseries.Config {
				return timeseries.Config{Pool: srv.Pool(), FlushInterval: time.Hour}
			},
			func(_ *testing.T, clock *timeseries.ManualClock, _ *timeseries.Recorder) {
				clock.Advance(4 * time.Second)
			},
			"has not flushed in the 4s since the evaluator started",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := redistest.Start(t)
			clock := timeseries.NewManualClock(testnow.Now())
			cfg := c.recorder(t, srv)
			cfg.Clock, cfg.OnError = clock, func(error) {}
			rec, err := timeseries.NewRecorder(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer closeRecorder(rec)
			e, err := New(Config{Pool: srv.Pool(), Clock: clock, Instance: "a", Recorder: rec, StaleAfter: 3 * time.Second,
				Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App}}})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			ctx := context.Background()
			if soon := e.tick(ctx); !soon {
				t.Error("the first evaluation, before any flush, does not ask for the next soon")
			}
			if h := e.Health(); h.DataMissing || h.LastError != "" || h.Evaluations != 0 || !h.Leader {
				t.Fatalf("before the first flush: %+v; want the lease, nothing missing, nothing evaluated", h)
			}
			if states, _, err := e.st.load(ctx); err != nil || len(states) != 0 {
				t.Fatalf("states stored before the first flush: %v %v", states, err)
			}
			c.then(t, clock, rec)
			e.tick(ctx)
			h := e.Health()
			if c.missing == "" {
				if h.DataMissing || h.LastError != "" || h.Evaluations != 1 {
					t.Fatalf("after the first flush: %+v; want one evaluation", h)
				}
				return
			}
			if !h.DataMissing || !strings.Contains(h.LastError, c.missing) || h.Evaluations != 0 {
				t.Fatalf("%+v: want the data missing, %q", h, c.missing)
			}
		})
	}
}

// TestFirstEvaluationSoon: run as an app runs it, on the system clock,
// the evaluator evaluates within a few seconds of its start, never
// saying the data are missing on the way; the next one would only come
// an Interval later.
func TestFirstEvaluationSoon(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	defer closeRecorder(rec)
	e, err := New(Config{Pool: srv.Pool(), Instance: "a", Recorder: rec, Interval: time.Hour,
		Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := time.Now()
	go e.Run(ctx)
	defer e.Close(context.Background())
	for e.Health().Evaluations == 0 {
		if h := e.Health(); h.DataMissing || h.LastError != "" {
			t.Fatalf("%v after start: %+v", time.Since(started), h)
		}
		if time.Since(started) > 10*time.Second {
			t.Fatal("no evaluation within 10 s of the start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("first evaluation %v after the start", time.Since(started))
	if states, _, err := e.st.load(ctx); err != nil || len(states) != 2 {
		t.Fatalf("stored states %v %v: want the SLO's page and ticket alerts", states, err)
	}
}
