package echov5_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/pulse-dev/pulse/echov5"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// postApp is the benchmarked app: one route with a path parameter and a
// trivial handler, behind mw when it is not nil.
func postApp(mw echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	if mw != nil {
		e.Use(mw)
	}
	e.GET("/posts/:id", func(c *echo.Context) error { return c.String(http.StatusOK, "post") })
	e.GET("/gone", func(c *echo.Context) error { return echo.NewHTTPError(http.StatusGone, "gone") })
	return e
}

// discardWriter is a ResponseWriter that keeps nothing, so both variants
// pay the same, small, cost for the response itself.
type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// allocsPerRequest is the allocations of one request to e once warm.
func allocsPerRequest(e *echo.Echo) float64 { return allocsPerRequestTo(e, "/posts/42") }

// allocsPerRequestTo is the allocations of one request for target.
func allocsPerRequestTo(e *echo.Echo, target string) float64 {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := &discardWriter{header: http.Header{}}
	return testing.AllocsPerRun(1000, func() { e.ServeHTTP(w, req) })
}

// pulseApp is postApp with Hits (routes and status classes) recording
// into srv; check, after the requests, that Redis holds want hits.
func pulseApp(tb testing.TB, srv *redistest.Server) (e *echo.Echo, check func(want int64)) {
	srv.FlushAll()
	// A manual clock that stands still: no flush runs while allocations
	// are counted (AllocsPerRun counts the whole process's); Close writes.
	rec := recorder(tb, srv, timeseries.Config{Clock: timeseries.NewManualClock(time.Now()), OnError: func(err error) { tb.Error(err) }})
	e = postApp(echov5.HitsWithConfig(echov5.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	return e, func(want int64) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rec.Close(ctx); err != nil {
			tb.Fatal(err)
		}
		if got := srv.HashSum("count:86400:GET /posts/:id"); got != want {
			tb.Fatalf("Redis holds %d hits, served %d requests", got, want)
		}
	}
}

// Counting a request adds no allocation to Echo's own, whether the
// handler answers, no route matches, or the handler returns an
// *echo.HTTPError.
func TestHitsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random; allocations are counted without it")
	}
	srv := redistest.Start(t)
	e, check := pulseApp(t, srv)
	for _, target := range []string{"/posts/42", "/nowhere", "/gone"} {
		bare, pulse := allocsPerRequestTo(postApp(nil), target), allocsPerRequestTo(e, target)
		t.Logf("%s: %v allocations per request with Hits, %v without", target, pulse, bare)
		if pulse > bare {
			t.Errorf("%s: %v allocations per request with Hits, %v without", target, pulse, bare)
		}
	}
	check(1001) // AllocsPerRun's warm-up run and its 1000
}

// BenchmarkHits serves one full Echo request per op through ServeHTTP,
// bare and with Hits recording into a real redis-server with its flusher
// running; the pulse variant reports its time as a multiple of bare's
// (x-bare) and its allocations beyond bare's (extra-allocs/op).
func BenchmarkHits(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed; `make bench` installs it")
	}
	srv := redistest.Start(b)
	srv.Do("CONFIG", "SET", "appendonly", "no") // time the request path, not the disk
	var bareNs float64
	run := func(b *testing.B, e *echo.Echo) (served int64) {
		req := httptest.NewRequest(http.MethodGet, "/posts/42", nil)
		w := &discardWriter{header: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			e.ServeHTTP(w, req)
			served++
		}
		return served
	}
	b.Run("bare", func(b *testing.B) {
		run(b, postApp(nil))
		bareNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("pulse", func(b *testing.B) {
		e, check := pulseApp(b, srv)
		served := run(b, e)
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if bareNs > 0 {
			b.ReportMetric(ns/bareNs, "x-bare")
		}
		b.ReportMetric(allocsPerRequest(e)-allocsPerRequest(postApp(nil)), "extra-allocs/op")
		check(served + 1001)
	})
}
