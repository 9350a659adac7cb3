package mount_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/pulseecho/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// redisPool dials the Redis in REDIS_URL, as an app would.
func redisPool() *redis.Pool {
	return &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL"))
	}}
}

func ExampleDashboard() {
	pool := redisPool()
	defer pool.Close()
	clock := timeseries.NewManualClock(time.Unix(1700000002, 0)) // a fixed time, for the output below
	rec, _ := timeseries.NewRecorder(timeseries.Config{Pool: pool, Clock: clock})

	e := echo.New()
	e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, HitsName: "example-mount"}))
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "home") })
	login := echomw.BasicAuth(func(user, pass string, _ echo.Context) (bool, error) { return user == "ops" && pass == "s3cret", nil })
	if err := mount.Dashboard(e, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}, login); err != nil {
		panic(err)
	}

	get := func(path string) string {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.SetBasicAuth("ops", "s3cret")
		e.ServeHTTP(w, r)
		return fmt.Sprintf("%d %s", w.Code, w.Body)
	}
	get("/")
	get("/")
	get("/dashboard/")                                                                           // not counted: the dashboard skips its own requests
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/dashboard/", nil)) // refused by the login: not counted either
	_ = rec.Flush(context.Background())

	fmt.Print(get("/dashboard/api/counters/example-mount?precision=5"))
	fmt.Print(get("/dashboard/api/counters/example-mount?precision=7"))
	fmt.Print(get("/dashboard/api/counters/nope?precision=5"))
	_ = rec.Close(context.Background())
	// Output:
	// 200 {"name":"example-mount","precision":5,"samples":[{"time":1700000000,"count":2}],"current":1700000000}
	// 400 {"error":"precision 7 is not kept; use one of [5 60 300 3600 18000 86400]"}
	// 404 {"error":"no such series at this precision"}
}
