package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/middleware"
	"github.com/pulse-dev/pulse/middleware/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestForwardsToPulseecho: an app written against the old paths counts
// its requests and mounts the dashboard, whose requests are not counted.
// The counting itself is pulseecho's, tested there.
func TestForwardsToPulseecho(t *testing.T) {
	srv := redistest.Start(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := middleware.DefaultHitsConfig
	cfg.Recorder, cfg.HitsName, cfg.Routes = rec, "forwarded", true
	e := echo.New()
	e.Use(middleware.Hits(rec), middleware.HitsWithConfig(cfg))
	e.GET("/posts/:id", func(c echo.Context) error { return c.String(http.StatusOK, "a post") })
	if err := mount.Dashboard(e, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/posts/1", "/dashboard/"} {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, w.Code)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"hits": 1, "forwarded": 1, "GET /posts/:id": 1} {
		if got := srv.HashSum(timeseries.Schema{}.CountKey(86400, name)); got != want {
			t.Errorf("%s counted %d requests, want %d", name, got, want)
		}
	}
}
