package pulseecho_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/timeseries"
)

// recorder returns a Recorder over a real redis-server, one precision to
// keep the reads short, closed when the test ends.
func recorder(t *testing.T, srv *redistest.Server, cfg timeseries.Config) *timeseries.Recorder {
	t.Helper()
	if cfg.OnError == nil {
		cfg.OnError = func(error) {}
	}
	return tracktest.NewRecorder(t, srv.Pool(), cfg)
}

// seriesCounts returns every series' total at the 1-day precision.
func seriesCounts(t *testing.T, srv *redistest.Server, rec *timeseries.Recorder) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	members, err := redis.Strings(srv.Do("ZRANGE", "known:", 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, m := range members {
		p, name, _ := timeseries.ParseKnownMember(m)
		if p == 86400 {
			out[name] = srv.HashSum("count:" + m)
		}
	}
	return out
}

func forum(mw echo.MiddlewareFunc, extra ...echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.Use(mw)
	e.Use(extra...)
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "home") })
	e.GET("/posts/:id", func(c echo.Context) error {
		if c.Param("id") == "404" {
			return c.String(http.StatusNotFound, "no such post")
		}
		return c.String(http.StatusOK, "post")
	})
	e.POST("/posts", func(c echo.Context) error { return echo.NewHTTPError(http.StatusBadRequest, "bad post") })
	e.GET("/boom", func(c echo.Context) error { return errors.New("boom") })
	e.GET("/teapot", func(c echo.Context) error { return echo.NewHTTPError(http.StatusTeapot) })
	// Echo's error handler answers a wrapped *HTTPError with 500, and an
	// *HTTPError with the code of an *HTTPError inside it.
	e.GET("/wrapped", func(c echo.Context) error { return fmt.Errorf("load post: %w", echo.ErrNotFound) })
	e.GET("/internal", func(c echo.Context) error {
		return echo.NewHTTPError(http.StatusBadRequest).SetInternal(echo.NewHTTPError(http.StatusServiceUnavailable))
	})
	e.GET("/panic", func(c echo.Context) error { panic("handler bug") })
	e.Add("PROPFIND", "/posts/:id", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	e.GET("/dashboard/x", func(c echo.Context) error {
		timeseries.Skip(c.Response())
		return c.String(http.StatusOK, "not counted")
	})
	return e
}

func serve(e *echo.Echo, method, target string) int {
	rr := httptest.NewRecorder()
	e.ServeHTTP(rr, httptest.NewRequest(method, target, nil))
	return rr.Code
}

func TestHitsSeriesNames(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		method, target string
		code           int
		want           []string // series counted, besides hits
	}{
		{"GET", "/", 200, []string{"GET /", "status:2xx"}},
		{"GET", "/posts/7", 200, []string{"GET /posts/:id", "status:2xx"}},
		{"GET", "/posts/404", 404, []string{"GET /posts/:id", "status:4xx"}}, // a matched route's own 404
		{"GET", "/nowhere/at/all", 404, []string{"unmatched", "status:4xx"}},
		{"DELETE", "/posts/7", 405, []string{"unmatched", "status:4xx"}},
		{"PROPFIND", "/posts/7", 204, []string{"OTHER /posts/:id", "status:2xx"}},
		{"POST", "/posts", 400, []string{"POST /posts", "status:4xx"}},
		{"GET", "/boom", 500, []string{"GET /boom", "status:5xx"}},
		{"GET", "/teapot", 418, []string{"GET /teapot", "status:4xx"}},
		{"GET", "/wrapped", 500, []string{"GET /wrapped", "status:5xx"}},
		{"GET", "/internal", 503, []string{"GET /internal", "status:5xx"}},
		{"GET", "/panic", 500, []string{"GET /panic", "status:5xx"}},
		{"GET", "/dashboard/x", 200, nil}, // marked with timeseries.Skip: nothing, not even hits
	}
	for _, handleError := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s %s handleError=%v", tt.method, tt.target, handleError), func(t *testing.T) {
				srv.FlushAll()
				rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
				var errorHandlerCalls atomic.Int32
				e := forum(pulseecho.HitsWithConfig(pulseecho.HitsConfig{
					Recorder: rec, Routes: true, StatusClasses: true, HandleError: handleError,
				}), echomw.RecoverWithConfig(echomw.RecoverConfig{DisablePrintStack: true}))
				defaultHandler := e.HTTPErrorHandler
				e.HTTPErrorHandler = func(err error, c echo.Context) {
					errorHandlerCalls.Add(1)
					defaultHandler(err, c)
				}
				if code := serve(e, tt.method, tt.target); code != tt.code {
					t.Fatalf("status %d, want %d", code, tt.code)
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
				if got := seriesCounts(t, srv, rec); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("series = %v, want %v", got, want)
				}
				if n := errorHandlerCalls.Load(); n > 1 {
					t.Errorf("error handler called %d times", n)
				}
			})
		}
	}
}

func TestHitsSkipperAndSeriesName(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour, MaxNames: 4})
	e := forum(pulseecho.HitsWithConfig(pulseecho.HitsConfig{
		Recorder: rec,
		Skipper:  func(c echo.Context) bool { return c.Request().Header.Get("X-Health") != "" },
		SeriesName: func(c echo.Context) string {
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
	for i := 0; i < 10; i++ {
		do(fmt.Sprintf("t%d", i), false)
	}
	do("t0", false)
	do("bad\x01name", false) // invalid: counted in hits only
	got := seriesCounts(t, srv, rec)
	want := map[string]int64{"hits": 13, "tenant:t0": 2, "tenant:t1": 1, "tenant:t2": 1, "overflow": 7}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("series = %v, want %v", got, want)
	}
	if h := rec.Health(); h.OverflowNames != 7 {
		t.Errorf("overflow names = %d, want 7", h.OverflowNames)
	}
}

func TestHitsConfigErrors(t *testing.T) {
	if _, err := (pulseecho.HitsConfig{}).ToMiddleware(); err == nil {
		t.Error("a config without Recorder was accepted")
	}
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return nil, errors.New("unused") }}
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close(context.Background())
	if _, err := (pulseecho.HitsConfig{Recorder: rec, HitsName: "a\nb"}).ToMiddleware(); err == nil {
		t.Error("an invalid HitsName was accepted")
	}
	defer func() {
		if recover() == nil {
			t.Error("HitsWithConfig did not panic on a bad config")
		}
	}()
	pulseecho.HitsWithConfig(pulseecho.HitsConfig{})
}

// load sends goroutines×perGoroutine GETs to url and returns the number
// that did not answer 200 and the slowest request.
func load(t *testing.T, url string, goroutines, perGoroutine int, during func(done int64)) (failed int64, slowest time.Duration) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: goroutines}, Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sent atomic.Int64
	var bad atomic.Int64
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perGoroutine; i++ {
				start := time.Now()
				resp, err := client.Get(fmt.Sprintf("%s/posts/p%d", url, i))
				if err != nil || resp.StatusCode != 200 {
					bad.Add(1)
				}
				if resp != nil {
					resp.Body.Close()
				}
				d := time.Since(start)
				mu.Lock()
				slowest = max(slowest, d)
				mu.Unlock()
				if during != nil {
					during(sent.Add(1))
				}
			}
		}()
	}
	wg.Wait()
	return bad.Load(), slowest
}

// exactGoroutines clients send exactEach requests each in the tests of
// exact counts: 50 at once keep every stripe and the flusher contended;
// more requests per client only repeat that.
const exactGoroutines, exactEach = 50, 200

func TestHitsExactUnderConcurrency(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{Schema: timeseries.Schema{Precisions: tracktest.DefaultPrecisions()}})
	e := forum(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	ts := httptest.NewServer(e)
	defer ts.Close()

	failed, _ := load(t, ts.URL, exactGoroutines, exactEach, nil)
	if failed != 0 {
		t.Fatalf("%d requests failed", failed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hits", "GET /posts/:id", "status:2xx"} {
		for _, p := range tracktest.DefaultPrecisions() {
			if got := srv.HashSum(fmt.Sprintf("count:%d:%s", p, name)); got != exactGoroutines*exactEach {
				t.Errorf("%s at precision %d: %d hits, want %d", name, p, got, exactGoroutines*exactEach)
			}
		}
	}
}

// Redis stops in the middle of a load and comes back: no request fails or
// waits on it, and once Redis is back every hit is there.
func TestHitsRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: 50 * time.Millisecond, FlushTimeout: 300 * time.Millisecond})
	e := forum(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec}))
	ts := httptest.NewServer(e)
	defer ts.Close()

	// Half the requests meet a stopped Redis: thousands of hits, over
	// many 50 ms flushes.
	const goroutines, each = 20, 500
	var stopped, restarted sync.Once
	var stopAt, upAt time.Time // read once load has returned
	downAt := make(chan struct{})
	failed, slowest := load(t, ts.URL, goroutines, each, func(done int64) {
		switch {
		case done == goroutines*each/4:
			stopped.Do(func() { srv.Stop(); stopAt = time.Now(); close(downAt) })
		case done == goroutines*each*3/4:
			restarted.Do(func() {
				<-downAt
				if rec.Health().RedisUp {
					t.Error("the recorder did not notice Redis was down")
				}
				upAt = time.Now()
				srv.Restart()
			})
		}
	})
	if failed != 0 {
		t.Errorf("%d requests failed during the outage", failed)
	}
	// A liveness bound, not a speed claim: no request waited for Redis's
	// restart, so none took as long as the outage (thousands of
	// requests) lasted. A stopped Redis refuses connections at once, so
	// waiting on its timeouts is what TestHitsRedisHung checks.
	if outage := upAt.Sub(stopAt); slowest >= outage {
		t.Errorf("slowest request took %v, as long as Redis was down (%v)", slowest, outage)
	}
	t.Logf("slowest request during the outage: %v", slowest)
	deadline := time.Now().Add(time.Minute)
	for h := rec.Health(); (h.PendingHits != 0 || !h.RedisUp) && time.Now().Before(deadline); h = rec.Health() {
		time.Sleep(20 * time.Millisecond)
	}
	h := rec.Health()
	if h.PendingHits != 0 || h.DroppedHits != 0 || !h.RedisUp {
		t.Fatalf("after Redis came back: %+v", h)
	}
	for _, p := range []int{5, 86400} {
		if got := srv.HashSum(fmt.Sprintf("count:%d:hits", p)); got != goroutines*each {
			t.Errorf("precision %d: %d hits, want %d", p, got, goroutines*each)
		}
	}
	if members, _ := redis.Strings(srv.Do("ZRANGE", "known:", 0, -1), nil); !slices.Contains(members, "5:hits") {
		t.Error("hits is not in known: after the outage")
	}
	do := func(_, cmd string, args ...any) any { return srv.Do(cmd, args...) }
	tracktest.CheckLat(t, do, []int{5, 86400}, "hits", goroutines*each)
}

// Redis hangs (SIGSTOP: connections stay open, nothing answers) in the
// middle of a load, the way a slow or overloaded Redis looks. Requests
// must not wait for it: a design that wrote on the request path would
// hold each request for the pool's 2 s read timeout. Once Redis answers
// again every hit is there, once.
func TestHitsRedisHung(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: 50 * time.Millisecond, FlushTimeout: 2 * time.Second})
	e := forum(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec}))
	ts := httptest.NewServer(e)
	defer ts.Close()

	const goroutines, each = 10, 500
	var paused, resumed sync.Once
	failed, slowest := load(t, ts.URL, goroutines, each, func(done int64) {
		switch {
		case done == goroutines*each/5:
			paused.Do(srv.Pause)
		case done == goroutines*each*4/5:
			resumed.Do(srv.Resume)
		}
	})
	resumed.Do(srv.Resume)
	if failed != 0 {
		t.Errorf("%d requests failed while Redis hung", failed)
	}
	// Liveness, not speed: well under the 2 s a request would wait if it
	// talked to the hung Redis.
	if slowest > time.Second {
		t.Errorf("slowest request took %v while Redis hung", slowest)
	}
	t.Logf("slowest of %d requests, three fifths of them sent while Redis hung: %v", goroutines*each, slowest)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if h := rec.Health(); h.DroppedHits != 0 || h.PendingHits != 0 {
		t.Errorf("after Close: %+v", h)
	}
	for _, p := range []int{5, 86400} {
		if got := srv.HashSum(fmt.Sprintf("count:%d:hits", p)); got != goroutines*each {
			t.Errorf("precision %d: %d hits, want %d", p, got, goroutines*each)
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
	e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true}))
	e.GET("/sleep/:i", func(c echo.Context) error {
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
