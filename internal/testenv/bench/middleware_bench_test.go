package bench_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo-contrib/echoprometheus"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/pulse-dev/pulse/internal/testenv/bench"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/timeseries"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// BenchmarkEchoMiddleware serves one full Echo request per op through
// ServeHTTP, a route with a path parameter and a trivial handler, with no
// monitoring (bare), with Pulse's Hits in its default and its
// routes+status form, with the floor of any duration middleware (timed:
// two clock reads and an atomic add), with OpenTelemetry's otelhttp and
// the SDK, and with echoprometheus, the usual alternative. The
// variants are sub-benchmarks so one run compares them on the same
// machine state; read each as its difference over bare.
//
// Pulse records into a real redis-server with its flusher running, and
// each run checks afterwards that Redis holds one hit per request.
func BenchmarkEchoMiddleware(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed; `make bench` installs it")
	}
	srv := redistest.Start(b)
	srv.Do("CONFIG", "SET", "appendonly", "no") // time the request path, not the disk
	pool := srv.Pool()

	pulse := func(cfg pulseecho.HitsConfig) func(b *testing.B) (echo.MiddlewareFunc, func()) {
		return func(b *testing.B) (echo.MiddlewareFunc, func()) {
			srv.FlushAll()
			rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, OnError: func(err error) { b.Error(err) }})
			if err != nil {
				b.Fatal(err)
			}
			cfg.Recorder = rec
			mw, err := cfg.ToMiddleware()
			if err != nil {
				b.Fatal(err)
			}
			check := func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := rec.Close(ctx); err != nil {
					b.Fatal(err)
				}
				// One request more than b.N: the warm-up request below.
				if got, want := srv.HashSum("count:86400:hits"), int64(b.N)+1; got != want {
					b.Fatalf("Redis holds %d hits, served %d requests", got, want)
				}
			}
			return mw, check
		}
	}
	variants := []struct {
		name string
		// setup returns the middleware (nil: none) and a check run after
		// the timed loop.
		setup func(b *testing.B) (echo.MiddlewareFunc, func())
	}{
		{"bare", func(*testing.B) (echo.MiddlewareFunc, func()) { return nil, func() {} }},
		{"pulse-hits", pulse(pulseecho.HitsConfig{})},
		{"pulse-routes-status", pulse(pulseecho.HitsConfig{Routes: true, StatusClasses: true})},
		{"timed", func(*testing.B) (echo.MiddlewareFunc, func()) { return bench.TimedMiddleware(), func() {} }},
		{"otel", func(b *testing.B) (echo.MiddlewareFunc, func()) {
			reader := metric.NewManualReader()
			provider := metric.NewMeterProvider(metric.WithReader(reader))
			mw := echo.WrapMiddleware(otelhttp.NewMiddleware("server", otelhttp.WithMeterProvider(provider)))
			return mw, func() {
				var rm metricdata.ResourceMetrics
				if err := reader.Collect(context.Background(), &rm); err != nil || len(rm.ScopeMetrics) == 0 {
					b.Fatalf("otel collected %d scopes: %v", len(rm.ScopeMetrics), err)
				}
			}
		}},
		{"echoprometheus", func(b *testing.B) (echo.MiddlewareFunc, func()) {
			mw, err := echoprometheus.MiddlewareConfig{Registerer: prometheus.NewRegistry()}.ToMiddleware()
			if err != nil {
				b.Fatal(err)
			}
			return mw, func() {}
		}},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			mw, check := v.setup(b)
			e := echo.New()
			if mw != nil {
				e.Use(mw)
			}
			e.GET("/posts/:id", func(c echo.Context) error { return c.String(http.StatusOK, "post") })
			warm := httptest.NewRecorder()
			e.ServeHTTP(warm, httptest.NewRequest(http.MethodGet, "/posts/42", nil))
			if warm.Code != http.StatusOK || warm.Body.String() != "post" {
				b.Fatalf("warm-up request: %d %q", warm.Code, warm.Body.String())
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest(http.MethodGet, "/posts/42", nil)
				w := &discardWriter{header: http.Header{}}
				for pb.Next() {
					e.ServeHTTP(w, req)
				}
			})
			b.StopTimer()
			check()
		})
	}
}

// discardWriter is a ResponseWriter that keeps nothing, so every variant
// pays the same, small, cost for the response itself.
type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}
