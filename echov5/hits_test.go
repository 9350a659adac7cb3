package echov5_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v5"
	echomw "github.com/labstack/echo/v5/middleware"

	"github.com/pulse-dev/pulse/echov5"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestHitsSeriesNames(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		method, target string
		code           int
		want           []string // series counted, besides hits
	}{
		{"GET", "/", 200, []string{"GET /", "status:2xx"}},
		{"HEAD", "/", 405, []string{"unmatched", "status:4xx"}}, // v5 serves HEAD for GET routes only when configured to
		{"GET", "/posts/7", 200, []string{"GET /posts/:id", "status:2xx"}},
		{"GET", "/posts/404", 404, []string{"GET /posts/:id", "status:4xx"}},  // a matched route's own 404
		{"GET", "/posts/gone", 404, []string{"GET /posts/:id", "status:4xx"}}, // ... as echo.ErrNotFound
		{"GET", "/nowhere/at/all", 404, []string{"unmatched", "status:4xx"}},
		{"DELETE", "/posts/7", 405, []string{"unmatched", "status:4xx"}},           // Path() names "/posts/:id" here
		{"OPTIONS", "/posts/7", 204, []string{"OPTIONS /posts/:id", "status:2xx"}}, // Echo's automatic answer
		{"GET", "/files/a.txt", 404, []string{"unmatched", "status:4xx"}},          // the app's RouteNotFound
		{"GET", "/admin/nope", 404, []string{"unmatched", "status:4xx"}},           // a group's catch-all 404 route
		{"GET", "/admin/users", 200, []string{"GET /admin/users", "status:2xx"}},
		{"PROPFIND", "/posts/7", 204, []string{"OTHER /posts/:id", "status:2xx"}},
		{"POST", "/posts", 400, []string{"POST /posts", "status:4xx"}},
		{"GET", "/boom", 500, []string{"GET /boom", "status:5xx"}},
		{"GET", "/teapot", 418, []string{"GET /teapot", "status:4xx"}},
		{"GET", "/forbidden", 403, []string{"GET /forbidden", "status:4xx"}}, // a wrapped sentinel
		{"GET", "/slow", 429, []string{"GET /slow", "status:4xx"}},           // the app's StatusCode()
		{"GET", "/wrapped", 502, []string{"GET /wrapped", "status:5xx"}},
		{"GET", "/late", 201, []string{"GET /late", "status:2xx"}},
		{"GET", "/panic", 500, []string{"GET /panic", "status:5xx"}},
		{"GET", "/dashboard/x", 200, nil}, // marked with timeseries.Skip: nothing, not even hits
	}
	for _, handleError := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s %s handleError=%v", tt.method, tt.target, handleError), func(t *testing.T) {
				srv.FlushAll()
				rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
				var errorHandlerCalls atomic.Int32
				e := forum(echov5.HitsWithConfig(echov5.HitsConfig{
					Recorder: rec, Routes: true, StatusClasses: true, HandleError: handleError,
				}), echomw.RecoverWithConfig(echomw.RecoverConfig{DisablePrintStack: true}))
				defaultHandler := e.HTTPErrorHandler
				e.HTTPErrorHandler = func(c *echo.Context, err error) {
					errorHandlerCalls.Add(1)
					defaultHandler(c, err)
				}
				if rr := serve(e, tt.method, tt.target); rr.Code != tt.code {
					t.Fatalf("status %d, want %d", rr.Code, tt.code)
				}
				want := map[string]int64{}
				if tt.want != nil {
					want["hits"] = 1
				}
				for _, name := range tt.want {
					want[name] = 1
				}
				if len(tt.want) == 2 { // the route's own status class
					want[tt.want[0]+" "+tt.want[1]] = 1
				}
				if got := seriesCounts(t, srv, rec); !maps.Equal(got, want) {
					t.Errorf("series = %v, want %v", got, want)
				}
				if n := errorHandlerCalls.Load(); n > 1 {
					t.Errorf("error handler called %d times", n)
				}
			})
		}
	}
}

// An app whose error handler answers differently from the error's own
// status: with HandleError the count is what the client got; without it,
// what the error says.
func TestHitsHandleErrorCountsWhatWasWritten(t *testing.T) {
	srv := redistest.Start(t)
	for _, tt := range []struct {
		handleError bool
		want        string
	}{{false, "status:4xx"}, {true, "status:5xx"}} {
		t.Run(fmt.Sprint("handleError=", tt.handleError), func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
			e := echo.New()
			e.HTTPErrorHandler = func(c *echo.Context, err error) {
				if r, _ := echo.UnwrapResponse(c.Response()); r != nil && r.Committed {
					return
				}
				_ = c.String(http.StatusServiceUnavailable, "down for maintenance")
			}
			e.Use(echov5.HitsWithConfig(echov5.HitsConfig{Recorder: rec, StatusClasses: true, HandleError: tt.handleError}))
			e.GET("/", func(c *echo.Context) error { return echo.ErrBadRequest })
			if rr := serve(e, "GET", "/"); rr.Code != http.StatusServiceUnavailable || rr.Body.String() != "down for maintenance" {
				t.Fatalf("answer %d %q", rr.Code, rr.Body.String())
			}
			want := map[string]int64{"hits": 1, tt.want: 1}
			if got := seriesCounts(t, srv, rec); !maps.Equal(got, want) {
				t.Errorf("series = %v, want %v", got, want)
			}
		})
	}
}

func TestHitsSkipperAndSeriesName(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour, MaxNames: 4})
	e := forum(echov5.HitsWithConfig(echov5.HitsConfig{
		Recorder: rec,
		Skipper:  func(c *echo.Context) bool { return c.Request().Header.Get("X-Health") != "" },
		SeriesName: func(c *echo.Context) string {
			if tenant := c.Request().Header.Get("X-Tenant"); tenant != "" {
				return "tenant:" + tenant
			}
			return ""
		},
	}))
	do := func(tenant string, health bool) {
		req := httptest.NewRequest("GET", "/", nil)
		if tenant != "" {
			req.Header.Set("X-Tenant", tenant)
		}
		if health {
			req.Header.Set("X-Health", "1")
		}
		e.ServeHTTP(httptest.NewRecorder(), req)
	}
	do("", true) // skipped
	do("", false)
	// hits plus three tenants reach the cap of 4 names; the rest fold.
	for i := range 10 {
		do(fmt.Sprintf("t%d", i), false)
	}
	do("t0", false)
	do("bad\x01name", false) // invalid: counted in hits only
	got := seriesCounts(t, srv, rec)
	want := map[string]int64{"hits": 13, "tenant:t0": 2, "tenant:t1": 1, "tenant:t2": 1, "overflow": 7}
	if !maps.Equal(got, want) {
		t.Errorf("series = %v, want %v", got, want)
	}
	if h := rec.Health(); h.OverflowNames != 7 {
		t.Errorf("overflow names = %d, want 7", h.OverflowNames)
	}
}

// Nil and zero fields take the defaults: a config with only a Recorder
// counts like Hits.
func TestHitsDefaults(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	mw, err := echov5.HitsConfig{Recorder: rec, Routes: true}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e := forum(mw)
	serve(e, "GET", "/")
	serve(e, "GET", "/nowhere")
	e2 := forum(echov5.Hits(rec))
	serve(e2, "GET", "/")
	want := map[string]int64{"hits": 3, "GET /": 1, "unmatched": 1}
	if got := seriesCounts(t, srv, rec); !maps.Equal(got, want) {
		t.Errorf("series = %v, want %v", got, want)
	}
}

func TestHitsConfigErrors(t *testing.T) {
	if _, err := (echov5.HitsConfig{}).ToMiddleware(); err == nil || !strings.HasPrefix(err.Error(), "echov5: hits: ") {
		t.Errorf("a config without Recorder: %v", err)
	}
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return nil, errors.New("unused") }}
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close(context.Background())
	for _, cfg := range []echov5.HitsConfig{
		{Recorder: rec, HitsName: "a\nb"},
		{Recorder: rec, Routes: true, UnmatchedName: "a\nb"},
	} {
		if _, err := cfg.ToMiddleware(); err == nil || !strings.HasPrefix(err.Error(), "echov5: hits: ") {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("HitsWithConfig did not panic on a bad config")
		}
	}()
	echov5.HitsWithConfig(echov5.HitsConfig{})
}

// Many clients at once over a real server, two routes and a route miss:
// every hit is in Redis, exactly, at both precisions.
func TestHitsExactUnderConcurrency(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: 20 * time.Millisecond})
	e := forum(echov5.HitsWithConfig(echov5.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	e.GET("/ok/*", func(c *echo.Context) error { return c.String(http.StatusOK, "ok") })
	ts := httptest.NewServer(e)
	defer ts.Close()

	const goroutines, each = 20, 600
	failed := load(t, ts.URL, goroutines, each, func(i int) string {
		if i%3 == 2 {
			return fmt.Sprintf("/ok/%d", i) // counted under "GET /ok/*"
		}
		return fmt.Sprintf("/posts/p%d", i)
	})
	if failed != 0 {
		t.Fatalf("%d requests failed", failed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"hits": goroutines * each, "status:2xx": goroutines * each,
		"GET /posts/:id": goroutines * each * 2 / 3, "GET /ok/*": goroutines * each / 3,
	}
	for name, n := range want {
		for _, p := range []int{5, 86400} {
			if got := srv.HashSum(fmt.Sprintf("count:%d:%s", p, name)); got != n {
				t.Errorf("%s at precision %d: %d hits, want %d", name, p, got, n)
			}
		}
	}
}

// Handlers that sleep known times: the durations recorded for hits and
// the route have their p50, p90 and p99 within the accuracy, plus the
// measured scheduling slack, of the exact ones.
func TestHitsDurations(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	sl := tracktest.NewSleeper(200)
	e := echo.New()
	e.Use(echov5.HitsWithConfig(echov5.HitsConfig{Recorder: rec, Routes: true}))
	e.GET("/sleep/:i", func(c *echo.Context) error {
		i, _ := strconv.Atoi(c.Param("i"))
		sl.Sleep(i)
		return c.NoContent(http.StatusNoContent)
	})
	sl.Run(func(i int) { serve(e, "GET", fmt.Sprintf("/sleep/%d", i)) })
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hits", "GET /sleep/:i"} {
		worst := tracktest.CheckQuantiles(t, rec, name, sl.Sleeps, sl.Overslept(), time.Millisecond)
		t.Logf("%s: largest quantile error %.2f%% (overslept up to %v)", name, worst*100, sl.Overslept())
	}
}
