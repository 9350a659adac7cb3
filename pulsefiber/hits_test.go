package pulsefiber_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsefiber"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// recorder is a Recorder over srv with keys of its own, flushing only
// when told.
func recorder(t *testing.T, srv *redistest.Server, maxNames int) *timeseries.Recorder {
	t.Helper()
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), FlushInterval: time.Hour, MaxNames: maxNames,
		Schema: timeseries.Schema{Prefix: fmt.Sprintf("fiber%d:", time.Now().UnixNano())}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	if err := rec.Flush(context.Background()); err != nil { // loads the day's salt
		t.Fatal(err)
	}
	return rec
}

// totals flushes rec and returns each series' count in its day buckets.
func totals(t *testing.T, rec *timeseries.Recorder) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	series, err := rec.Store().Series(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, s := range series {
		samples, err := rec.Store().Samples(ctx, s.Name, 86400, timeseries.Range{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range samples {
			out[s.Name] += x.Count
		}
	}
	return out
}

// app is a Fiber app counting into rec with cfg, behind Fiber's recover,
// with routes of every kind the rows ask for.
func app(t *testing.T, cfg pulsefiber.HitsConfig) *fiber.App {
	t.Helper()
	a := fiber.New(fiber.Config{DisableStartupMessage: true})
	a.Use(recover.New())
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	a.Use(mw)
	a.Get("/status/:code", func(c *fiber.Ctx) error {
		code, _ := c.ParamsInt("code")
		return c.SendStatus(code)
	})
	a.Post("/items", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusCreated) })
	a.Get("/panic", func(*fiber.Ctx) error { panic("handler bug") })
	a.Get("/teapot", func(*fiber.Ctx) error { return fiber.NewError(fiber.StatusTeapot) })
	a.Get("/fail", func(*fiber.Ctx) error { return fmt.Errorf("wrapped: %w", errors.New("db down")) })
	a.Get("/skip", func(c *fiber.Ctx) error { pulsefiber.Skip(c); return c.SendStatus(fiber.StatusNoContent) })
	a.Get("/tenant/:tenant", func(c *fiber.Ctx) error { return c.SendString("ok") })
	return a
}

// send serves one request natively, through fasthttp, and returns its status.
func send(t *testing.T, a *fiber.App, method, target string, header ...string) int {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := a.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestHits(t *testing.T) {
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name     string
		maxNames int // the Recorder's cap, 64 when 0
		cfg      pulsefiber.HitsConfig
		requests [][]string // method, target, header pairs
		want     map[string]int64
	}{
		{"routes and classes, never raw paths", 0, pulsefiber.HitsConfig{Routes: true, StatusClasses: true},
			[][]string{{"GET", "/status/200"}, {"GET", "/status/503"}, {"POST", "/items"}, {"GET", "/nowhere/7"}, {"DELETE", "/items"}},
			map[string]int64{"hits": 5, "GET /status/:code": 2, "POST /items": 1, "unmatched": 2,
				"status:2xx": 2, "status:5xx": 1, "status:4xx": 2, "GET /status/:code status:2xx": 1,
				"GET /status/:code status:5xx": 1, "POST /items status:2xx": 1, "unmatched status:4xx": 2}},
		{"a panic counts as 500", 0, pulsefiber.HitsConfig{StatusClasses: true},
			[][]string{{"GET", "/panic"}}, map[string]int64{"hits": 1, "status:5xx": 1}},
		{"returned errors count as the error handler answers them", 0, pulsefiber.HitsConfig{StatusClasses: true},
			[][]string{{"GET", "/teapot"}, {"GET", "/fail"}}, map[string]int64{"hits": 2, "status:4xx": 1, "status:5xx": 1}},
		{"HandleError counts what the error handler wrote", 0, pulsefiber.HitsConfig{StatusClasses: true, HandleError: true},
			[][]string{{"GET", "/teapot"}, {"GET", "/fail"}}, map[string]int64{"hits": 2, "status:4xx": 1, "status:5xx": 1}},
		{"Skip and Skipper leave requests out", 0, pulsefiber.HitsConfig{
			Skipper: func(c *fiber.Ctx) bool { return c.Path() == "/items" }},
			[][]string{{"GET", "/skip"}, {"POST", "/items"}, {"GET", "/status/200"}}, map[string]int64{"hits": 1}},
		{"a name from a reused buffer is kept as it was", 5, pulsefiber.HitsConfig{
			SeriesName: func(c *fiber.Ctx) string { return c.Params("tenant") }},
			[][]string{{"GET", "/tenant/tenant-a"}, {"GET", "/tenant/tenant-b"}, {"GET", "/tenant/tenant-a"},
				{"GET", "/tenant/tenant-c"}, {"GET", "/tenant/tenant-a"}},
			map[string]int64{"hits": 5, "tenant-a": 3, "tenant-b": 1, "tenant-c": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := recorder(t, srv, cmp.Or(tc.maxNames, 64))
			cfg := tc.cfg
			cfg.Recorder = rec
			a := app(t, cfg)
			for _, r := range tc.requests {
				send(t, a, r[0], r[1], r[2:]...)
			}
			if got := totals(t, rec); !maps.Equal(got, tc.want) {
				t.Errorf("counted %v, want %v", got, tc.want)
			}
		})
	}
}

// A forged X-Forwarded-For mints no visitor: ten requests forging ten
// addresses are one visitor.
func TestForwardedHeadersNotTrusted(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, 0)
	a := app(t, pulsefiber.HitsConfig{Recorder: rec})
	for i := range 10 {
		send(t, a, "GET", "/status/200", "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i+1), "User-Agent", "kit/1")
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	day := timeseries.BucketStart(time.Now().Unix(), 86400)
	v, err := rec.Store().Visitors(context.Background(), "hits", 86400, day, day)
	if err != nil {
		t.Fatal(err)
	}
	if v.Window != 1 {
		t.Errorf("%d visitors, want 1: the forged addresses counted", v.Window)
	}
}
