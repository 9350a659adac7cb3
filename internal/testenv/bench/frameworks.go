package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo-contrib/echoprometheus"
	"github.com/labstack/echo/v4"
	echov5 "github.com/labstack/echo/v5"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	pulsev5 "github.com/pulse-dev/pulse/echov5"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// Every app counts what it served in its outermost layer, so the count
// sees every request the monitoring sees, in every variant alike. rec is
// nil for a variant that records nothing.

// echoV4App is the Echo v4 server of the variants bare, bare-middleware,
// pulse, pulse-counts, pulse-no-visitors, pulse-write-through,
// pulse-cluster, echoprometheus and timed.
func echoV4App(v Variant, rec *timeseries.Recorder, served *atomic.Int64) (http.Handler, error) {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			served.Add(1)
			return err
		}
	})
	switch {
	case rec != nil:
		mw, err := pulseecho.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}.ToMiddleware()
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		e.Use(mw)
	case v == BareMiddleware:
		e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error { return next(c) }
		})
	case v == Timed:
		e.Use(TimedMiddleware())
	case v == EchoPrometheus:
		mw, err := echoprometheus.MiddlewareConfig{Registerer: prometheus.NewRegistry()}.ToMiddleware()
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		e.Use(mw)
	}
	e.GET(Route, func(c echo.Context) error { return c.String(http.StatusOK, "post") })
	return e, nil
}

// TimedMiddleware is the floor of any duration middleware, the timed
// variant's: it reads the clock before and after the handler and adds
// the duration to a counter.
func TimedMiddleware() echo.MiddlewareFunc {
	var total atomic.Int64
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			total.Add(int64(time.Since(start)))
			return err
		}
	}
}

// otelApp is bare Echo v4 wrapped in otelhttp, whose metrics go to the
// SDK's MeterProvider with a ManualReader that collects when the server
// closes, as an exporter would.
func otelApp(served *atomic.Int64) (http.Handler, func(context.Context) (timeseries.Health, error), error) {
	reader := metric.NewManualReader()
	provider := metric.NewMeterProvider(metric.WithReader(reader))
	e, err := echoV4App(Bare, nil, served)
	if err != nil {
		return nil, nil, err
	}
	h := otelhttp.NewHandler(e, "server", otelhttp.WithMeterProvider(provider))
	closeFn := func(ctx context.Context) (timeseries.Health, error) {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(ctx, &rm); err != nil {
			return timeseries.Health{}, fmt.Errorf("bench: otel: %w", err)
		}
		return timeseries.Health{}, provider.Shutdown(ctx)
	}
	return h, closeFn, nil
}

// echoV5App is the Echo v5 server of bare-v5 and pulse-v5.
func echoV5App(rec *timeseries.Recorder, served *atomic.Int64) (http.Handler, error) {
	e := echov5.New()
	e.Use(func(next echov5.HandlerFunc) echov5.HandlerFunc {
		return func(c *echov5.Context) error {
			err := next(c)
			served.Add(1)
			return err
		}
	})
	if rec != nil {
		mw, err := pulsev5.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}.ToMiddleware()
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		e.Use(mw)
	}
	e.GET(Route, func(c *echov5.Context) error { return c.String(http.StatusOK, "post") })
	return e, nil
}

// netHTTPApp is the net/http server of bare-http and pulse-http: a
// ServeMux with the same route in its own pattern syntax.
func netHTTPApp(rec *timeseries.Recorder, served *atomic.Int64) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /posts/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		_, _ = w.Write([]byte("post"))
	})
	var h http.Handler = mux
	if rec != nil {
		mw, err := pulsehttp.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}.ToMiddleware()
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		h = mw(mux)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		served.Add(1)
	}), nil
}
