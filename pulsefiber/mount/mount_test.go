package mount_test

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsefiber"
	"github.com/pulse-dev/pulse/pulsefiber/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// The mounted dashboard answers under its prefix with its security
// headers, behind the app's login, and none of its requests is counted,
// a refusal of login included; the app's own route still is.
func TestDashboard(t *testing.T) {
	srv := redistest.Start(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), FlushInterval: time.Hour,
		Schema: timeseries.Schema{Prefix: fmt.Sprintf("fibermount%d:", time.Now().UnixNano())}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(pulsefiber.HitsWithConfig(pulsefiber.HitsConfig{Recorder: rec, Routes: true}))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("home") })
	login := func(c *fiber.Ctx) error {
		if c.Get("Authorization") != "ops" {
			return c.SendStatus(fiber.StatusUnauthorized)
		}
		return c.Next()
	}
	if err := mount.Dashboard(app, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}, login); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		target, auth string
		want         int
	}{
		{"/dashboard/", "ops", 200}, {"/dashboard/api/health", "ops", 200}, {"/dashboard", "ops", 302},
		{"/dashboard/", "", 401}, {"/", "", 200},
	} {
		req := httptest.NewRequest("GET", r.target, nil)
		if r.auth != "" {
			req.Header.Set("Authorization", r.auth)
		}
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != r.want {
			t.Errorf("%s (auth %q): %d, want %d", r.target, r.auth, resp.StatusCode, r.want)
		}
		if r.target != "/" && resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: no security headers: %v", r.target, resp.Header)
		}
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	series, err := rec.Store().Series(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range series {
		samples, _ := rec.Store().Samples(context.Background(), s.Name, 86400, timeseries.Range{})
		for _, x := range samples {
			got[s.Name] += x.Count
		}
	}
	if want := map[string]int64{"hits": 1, "GET /": 1}; !maps.Equal(got, want) {
		t.Errorf("counted %v, want %v: only the app's own request", got, want)
	}
}
