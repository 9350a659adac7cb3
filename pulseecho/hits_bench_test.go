package pulseecho_test

import (
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkHits serves one Echo request per op, a route with a path
// parameter, bare and with Hits (routes and status classes), side by
// side, pulse-counts with durations off (no clock read) and
// pulse-no-visitors with visitors off (no visitor worked out);
// "extra-ns/op" is what Hits adds. The comparison with
// echoprometheus and the other frameworks is internal/testenv/bench's.
func BenchmarkHits(b *testing.B) {
	srv := redistest.Start(b)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), FlushInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rec.Close(b.Context()) })
	counts, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), FlushInterval: time.Hour, DisableDurations: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = counts.Close(b.Context()) })
	noVisitors, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), FlushInterval: time.Hour, DisableVisitors: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = noVisitors.Close(b.Context()) })
	hits := pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true})
	hitsCounts := pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: counts, Routes: true, StatusClasses: true})
	hitsNoVisitors := pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: noVisitors, Routes: true, StatusClasses: true})
	var bare float64
	for _, v := range []struct {
		name string
		mw   echo.MiddlewareFunc
	}{{"bare", nil}, {"pulse", hits}, {"pulse-counts", hitsCounts}, {"pulse-no-visitors", hitsNoVisitors}} {
		b.Run(v.name, func(b *testing.B) {
			e := echo.New()
			if v.mw != nil {
				e.Use(v.mw)
			}
			e.GET("/posts/:id", func(c echo.Context) error { return c.String(http.StatusOK, "post") })
			req := httptest.NewRequest(http.MethodGet, "/posts/42", nil)
			w := &discardWriter{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(w, req)
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if v.mw == nil {
				bare = ns
			} else if bare > 0 {
				b.ReportMetric(ns-bare, "extra-ns/op")
			}
		})
	}
}

// discardWriter keeps nothing, so both variants pay the same small cost
// for the response itself.
type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// Hits adds no allocation to a request's, whether the handler answers,
// no route matches, or the handler returns an *echo.HTTPError. Echo v4
// allocates one closure per request for each Use middleware, so the
// control mounts a middleware that only calls the handler.
func TestHitsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random; allocations are counted without it")
	}
	srv := redistest.Start(t)
	// A manual clock that stands still: no flush runs while allocations
	// are counted (AllocsPerRun counts the whole process's).
	rec := recorder(t, srv, timeseries.Config{Clock: timeseries.NewManualClock(time.Now()), FlushInterval: time.Hour})
	hits := pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true})
	passThrough := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return next(c) }
	}
	app := func(mw echo.MiddlewareFunc) *echo.Echo {
		e := echo.New()
		e.Use(mw)
		e.GET("/posts/:id", func(c echo.Context) error { return c.String(http.StatusOK, "post") })
		e.GET("/gone", func(c echo.Context) error { return echo.NewHTTPError(http.StatusGone, "gone") })
		return e
	}
	control, pulse := app(passThrough), app(hits)
	for _, target := range []string{"/posts/42", "/nowhere", "/gone"} {
		t.Run(target, func(t *testing.T) {
			allocs := func(e *echo.Echo) float64 {
				req := httptest.NewRequest(http.MethodGet, target, nil)
				w := &discardWriter{header: http.Header{}}
				return testing.AllocsPerRun(1000, func() { e.ServeHTTP(w, req) })
			}
			with, without := allocs(pulse), allocs(control)
			t.Logf("%v allocations per request with Hits, %v with a middleware that does nothing", with, without)
			if with > without {
				t.Errorf("%v allocations per request with Hits, %v with a middleware that does nothing", with, without)
			}
			// Echo builds each Use middleware's closure per request, so
			// what it holds is paid on every request: a few words, never
			// the config.
			withBytes, withoutBytes := bytesPerRequest(pulse, target), bytesPerRequest(control, target)
			t.Logf("%d bytes per request with Hits, %d with a middleware that does nothing", withBytes, withoutBytes)
			if withBytes > withoutBytes+32 {
				t.Errorf("%d bytes per request with Hits, %d with a middleware that does nothing: more than 32 more", withBytes, withoutBytes)
			}
		})
	}
}

// bytesPerRequest is the bytes the process allocates per request to e:
// the least over five rounds of 1000 requests, since the count is the
// whole process's and other goroutines only add to it.
func bytesPerRequest(e *echo.Echo, target string) uint64 {
	const runs = 1000
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := &discardWriter{header: http.Header{}}
	e.ServeHTTP(w, req)
	least := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			e.ServeHTTP(w, req)
		}
		runtime.ReadMemStats(&after)
		least = min(least, (after.TotalAlloc-before.TotalAlloc)/runs)
	}
	return least
}
