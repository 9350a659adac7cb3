// Package hitbench measures what an adapter adds to its router's request
// path, for the adapters' alloc tests and benchmarks: the allocations of
// a request with and without counting, and the time of one.
package hitbench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/race"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// discardWriter keeps nothing, so both variants pay the same for the
// response itself.
type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// allocsPerRequest is the allocations of one request for target once warm.
func allocsPerRequest(h http.Handler, target string) float64 {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := &discardWriter{header: http.Header{}}
	return testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, req) })
}

// counted returns app(rec), rec counting into srv with a clock that
// stands still, so no flush runs while allocations are counted; check,
// after the requests, that Redis holds want hits of series.
func counted(tb testing.TB, srv *redistest.Server, app func(*timeseries.Recorder) http.Handler, series string) (http.Handler, func(want int64)) {
	srv.FlushAll()
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: timeseries.NewManualClock(time.Now()),
		OnError: func(err error) { tb.Error(err) }})
	if err != nil {
		tb.Fatal(err)
	}
	return app(rec), func(want int64) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rec.Close(ctx); err != nil {
			tb.Fatal(err)
		}
		if got := srv.HashSum("count:86400:" + series); got != want {
			tb.Fatalf("Redis holds %d hits of %s, served %d requests", got, series, want)
		}
	}
}

// Allocs checks that app(rec), the bare app counted by an adapter,
// allocates no more per request than bare for each target, the first a
// request of series; Redis gets every hit.
func Allocs(t *testing.T, bare http.Handler, app func(*timeseries.Recorder) http.Handler, series string, targets ...string) {
	t.Helper()
	race.SkipMeasurement(t)
	h, check := counted(t, redistest.Start(t), app, series)
	for _, target := range targets {
		b, p := allocsPerRequest(bare, target), allocsPerRequest(h, target)
		t.Logf("%s: %v allocations per request counted, %v bare", target, p, b)
		if p > b {
			t.Errorf("%s: %v allocations per request counted, %v bare", target, p, b)
		}
	}
	check(1001) // AllocsPerRun's warm-up run and its 1000, of the first target
}

// Bench serves target once per op through bare and through app(rec), rec
// counting into a real redis-server; the counted variant reports its time
// as a multiple of bare's (x-bare).
func Bench(b *testing.B, bare http.Handler, app func(*timeseries.Recorder) http.Handler, series, target string) {
	srv := redistest.Start(b)
	var bareNs float64
	run := func(b *testing.B, h http.Handler) (served int64) {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		w := &discardWriter{header: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w, req)
			served++
		}
		return served
	}
	b.Run("bare", func(b *testing.B) {
		run(b, bare)
		bareNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("pulse", func(b *testing.B) {
		h, check := counted(b, srv, app, series)
		served := run(b, h)
		if bareNs > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/bareNs, "x-bare")
		}
		check(served)
	})
}
