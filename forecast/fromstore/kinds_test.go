package fromstore_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// hasFlag reports whether fd flags kind at or after from.
func hasFlag(fd *forecast.Fitted, kind forecast.AnomalyKind, from time.Time) bool {
	for _, f := range fd.Flags {
		if f.Kind == kind && !f.Bucket.Before(from) {
			return true
		}
	}
	return false
}

// An error ratio read from a route's hits and its 5xx series: 1 % for
// ten hours, then 30 % for the last three closed buckets, flagged as an
// error surge; the same route's counts are unmoved, and a route that
// never failed (no errors series) fits with no flag.
func TestFitErrors(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	current := time.Now().Unix() / 300 * 300
	surge := current - 3*300
	rng := rand.New(rand.NewPCG(7, 7))
	hits := []any{"count:300:GET /x"}
	errs := []any{"count:300:GET /x status:5xx"}
	calm := []any{"count:300:GET /y"}
	for t0 := current - 119*300; t0 <= current; t0 += 300 {
		p := 0.01
		if t0 >= surge {
			p = 0.3
		}
		n := 200
		e := 0
		for range n {
			if rng.Float64() < p {
				e++
			}
		}
		hits = append(hits, t0, n)
		errs = append(errs, t0, e)
		calm = append(calm, t0, n)
	}
	srv.Do("HSET", hits...)
	srv.Do("HSET", errs...)
	srv.Do("HSET", calm...)
	srv.Do("ZADD", "known:", 0, "300:GET /x", 0, "300:GET /x status:5xx", 0, "300:GET /y")

	ctx := context.Background()
	fd, err := fromstore.FitErrors(ctx, store, "GET /x", "GET /x status:5xx", 300, forecast.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if fd.Model.Kind != "error_ratio" || len(fd.History) != 119 {
		t.Fatalf("model %s over %d buckets", fd.Model.Kind, len(fd.History))
	}
	if !hasFlag(fd, forecast.ErrorSurge, time.Unix(surge, 0)) {
		t.Errorf("no error surge flagged from %v: %+v", time.Unix(surge, 0).UTC(), fd.Flags)
	}
	if h := fd.History[50]; math.Abs(h.Expected-0.01) > 0.01 {
		t.Errorf("expected ratio %g mid-history, want about 0.01", h.Expected)
	}
	fy, err := fromstore.FitErrors(ctx, store, "GET /y", "GET /y status:5xx", 300, forecast.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fy.Flags) != 0 {
		t.Errorf("a route with no errors flags %+v", fy.Flags)
	}
	if _, err := fromstore.FitErrors(ctx, store, "GET /none", "GET /none status:5xx", 300, forecast.Config{}); err == nil {
		t.Error("an unknown series fitted")
	}
}

// Durations recorded under a clock that ends at real time: a median near
// 20 ms for five hours, then 100 ms for the last three closed buckets,
// flagged as a latency regression of the p50.
func TestFitDurations(t *testing.T) {
	srv := redistest.Start(t)
	now := time.Now()
	current := now.Truncate(5 * time.Minute)
	slow := current.Add(-15 * time.Minute)
	clock := timeseries.NewManualClock(current.Add(-60 * 5 * time.Minute))
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: clock, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := rec.Counter("GET /x")
	rng := rand.New(rand.NewPCG(3, 3))
	ctx := context.Background()
	for clock.Now().Before(current) {
		median := 20 * time.Millisecond
		if !clock.Now().Before(slow) {
			median = 100 * time.Millisecond
		}
		for range 40 {
			d := time.Duration(float64(median) * math.Exp(0.3*rng.NormFloat64()))
			rec.RecordRequest(timeseries.Request{Duration: d, Timed: [timeseries.MaxTimed]*timeseries.Counter{c}})
		}
		if err := rec.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		clock.Advance(5 * time.Minute)
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	fd, err := fromstore.FitDurations(ctx, rec.Store(), "GET /x", 300, 0.5, forecast.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if fd.Model.Kind != "latency" || len(fd.History) != 60 {
		t.Fatalf("model %s over %d buckets, want latency over 60", fd.Model.Kind, len(fd.History))
	}
	if e := fd.History[40].Expected; math.Abs(e-0.020) > 0.004 {
		t.Errorf("expected p50 %g s mid-history, want about 0.020", e)
	}
	if !hasFlag(fd, forecast.LatencyRegression, slow) {
		t.Errorf("no latency regression flagged from %v: %+v", slow.UTC(), fd.Flags)
	}
	if _, err := fromstore.FitDurations(ctx, rec.Store(), "GET /x", 300, 1.5, forecast.Config{}); err == nil {
		t.Error("quantile 1.5 fitted")
	}
}
