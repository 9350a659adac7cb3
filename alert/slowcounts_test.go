package alert

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestLatencyFromSlowCounts: recorders that count the requests slower
// than a threshold give its latency SLO the exact share of slow
// requests; without that count the rule reads the histograms, which take
// a threshold inside a bin at the bin's nearest edge. Ten minutes of 100
// requests a minute, 90 taking 100 ms, 5 taking 298 ms and 5 taking
// 400 ms: 10 % are slower than 250 ms (a bin edge) and 5 % slower than
// 300 ms, whose nearest edge, 297.3 ms, puts the 298 ms ones on the slow
// side. The clock stays near the wall clock: the histograms expire by
// Redis's.
func TestLatencyFromSlowCounts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	start := testnow.Now().Truncate(time.Minute)
	clock := timeseries.NewManualClock(start)
	apps := map[string][]time.Duration{"counted:": {250 * time.Millisecond, 300 * time.Millisecond}, "histograms:": nil}
	recs := map[string]*timeseries.Recorder{}
	for prefix, thresholds := range apps {
		rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: clock,
			Schema: timeseries.Schema{Prefix: prefix}, SlowThresholds: thresholds})
		if err != nil {
			t.Fatal(err)
		}
		defer closeRecorder(rec)
		recs[prefix] = rec
	}
	durations := append(append(repeat(100*time.Millisecond, 90), repeat(298*time.Millisecond, 5)...), repeat(400*time.Millisecond, 5)...)
	for i := range 10 {
		clock.Advance(start.Add(time.Duration(i) * time.Minute).Sub(clock.Now()))
		for _, rec := range recs {
			hits, _ := rec.Counter(App)
			for _, d := range durations {
				rec.RecordRequest(timeseries.Request{Duration: d, Timed: [4]*timeseries.Counter{hits}})
			}
		}
		for _, rec := range recs {
			flushAgain(t, clock, rec)
		}
	}
	clock.Advance(20 * time.Second) // every window holds ten minutes' mix
	for _, rec := range recs {
		// Their flushers may not have run since the clock moved: a last
		// good flush 20 s old would read as data missing.
		flushAgain(t, clock, rec)
	}
	windows := []Window{{Long: Duration(5 * time.Minute), Short: Duration(time.Minute), Burn: 100, Severity: "page"}}
	for _, c := range []struct {
		app       string
		threshold time.Duration
		burn      float64 // share of slow requests over the 1 % budget
	}{
		{"counted:", 250 * time.Millisecond, 10},
		{"counted:", 300 * time.Millisecond, 5},
		{"histograms:", 250 * time.Millisecond, 10},
		{"histograms:", 300 * time.Millisecond, 10},
	} {
		t.Run(c.app+c.threshold.String(), func(t *testing.T) {
			e, err := New(Config{Pool: srv.Pool(), Clock: clock, Instance: c.app, Schema: timeseries.Schema{Prefix: c.app},
				Recorder: recs[c.app], Logger: slog.New(slog.DiscardHandler),
				Rules: []Rule{{Name: "Lat", Kind: Latency, Series: App, Threshold: Duration(c.threshold), Windows: windows}}})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			e.tick(context.Background())
			if h := e.Health(); h.LastError != "" || h.Evaluations != 1 {
				t.Fatalf("%+v", h)
			}
			a := answer(t, e).Rules[0].Alerts[0]
			if math.Abs(a.Value-c.burn) > 1e-9 {
				t.Errorf("burn rate %v, want %v", a.Value, c.burn)
			}
		})
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestSlowCountsSince: a window reaching back before the recorders began
// counting a threshold is read from that moment on, the slow requests
// and all of them alike: before it the hits had no slow count.
func TestSlowCountsSince(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	tr := traffic{}
	slow := timeseries.SlowSeries(App, 500*time.Millisecond)
	for k := int64(1); k <= 60; k++ {
		tr.add(App, burnNow-60*k, 100)
		if k <= 20 {
			tr.add(slow, burnNow-60*k, 10) // counted for the last 20 minutes
		}
	}
	tr.write(t, srv.Pool())
	srv.Do("HSET", timeseries.Schema{}.SlowKey(), "500ms", burnNow-20*60)
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	windows := []Window{{Long: Duration(time.Hour), Short: Duration(5 * time.Minute), Burn: 14.4, Severity: "page"}}
	e, err := New(Config{Pool: srv.Pool(), Clock: clock, Instance: "a",
		Rules: []Rule{{Name: "Lat", Kind: Latency, Series: App, Threshold: Duration(500 * time.Millisecond), Windows: windows}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	e.tick(context.Background())
	// Over the hour, 10 % of the last 20 minutes' requests were slow:
	// burn 10, not the 3.3 of 200 slow in 6000 requests.
	if a := answer(t, e).Rules[0].Alerts[0]; math.Abs(a.Value-10) > 1e-9 || a.Annotations["latency_threshold"] != "500ms" {
		t.Errorf("burn rate %v (%v), want 10 over the 20 minutes counted", a.Value, a.Annotations)
	}
}

// TestRecorderWithoutTheThreshold: an evaluator given a recorder that
// does not count its latency rule's threshold says so at its start.
func TestRecorderWithoutTheThreshold(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), SlowThresholds: []time.Duration{time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeRecorder(rec)
	var log bytes.Buffer
	rules := []Rule{
		{Name: "Counted", Kind: Latency, Series: App, Threshold: Duration(time.Second)},
		{Name: "NotCounted", Kind: Latency, Series: App, Threshold: Duration(250 * time.Millisecond)},
	}
	e, err := New(Config{Pool: srv.Pool(), Recorder: rec, Rules: rules, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	if got := log.String(); !strings.Contains(got, "rule=NotCounted") || !strings.Contains(got, "threshold=250ms") || strings.Contains(got, "rule=Counted") {
		t.Errorf("log %q: want a warning for NotCounted alone", got)
	}
	if got := SlowThresholds(append(rules, rules...)); len(got) != 2 || got[0] != time.Second || got[1] != 250*time.Millisecond {
		t.Errorf("SlowThresholds %v", got)
	}
}
