package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/internal/redistest"
	"github.com/pulse-dev/pulse/middleware"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkHits serves one Echo request per op, a route with a path
// parameter, bare and with Hits (routes and status classes), side by
// side, and pulse-counts with durations off (no clock read); "extra-ns/op"
// is what Hits adds. The comparison with
// echoprometheus and the other frameworks is internal/bench's.
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
	hits := middleware.HitsWithConfig(middleware.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true})
	hitsCounts := middleware.HitsWithConfig(middleware.HitsConfig{Recorder: counts, Routes: true, StatusClasses: true})
	var bare float64
	for _, v := range []struct {
		name string
		mw   echo.MiddlewareFunc
	}{{"bare", nil}, {"pulse", hits}, {"pulse-counts", hitsCounts}} {
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
