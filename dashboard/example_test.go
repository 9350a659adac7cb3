package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/pulse-dev/pulse/dashboard"
	pulsemw "github.com/pulse-dev/pulse/middleware"
	"github.com/pulse-dev/pulse/timeseries"
)

func ExampleMount() {
	mr, _ := miniredis.Run() // any Redis will do; this one lives in the process
	defer mr.Close()
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", mr.Addr()) }}
	defer pool.Close()
	clock := timeseries.NewManualClock(time.Unix(1700000002, 0))
	rec, _ := timeseries.NewRecorder(timeseries.Config{Pool: pool, Clock: clock})
	store, _ := timeseries.NewStore(pool, timeseries.Schema{}, clock)

	e := echo.New()
	e.Use(pulsemw.Hits(rec))
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "home") })
	login := echomw.BasicAuth(func(user, pass string, _ echo.Context) (bool, error) { return user == "ops" && pass == "s3cret", nil })
	if err := dashboard.Mount(e, "/dashboard", dashboard.Config{Store: store, Health: rec}, login); err != nil {
		panic(err)
	}

	get := func(path string) string {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.SetBasicAuth("ops", "s3cret")
		e.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Body)
		return fmt.Sprintf("%d %s", w.Code, body)
	}
	get("/")
	get("/")
	get("/dashboard/")                                                                           // not counted: the dashboard skips its own requests
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/dashboard/", nil)) // refused by the login: not counted either
	_ = rec.Flush(context.Background())

	fmt.Print(get("/dashboard/api/counters/hits?precision=5"))
	fmt.Print(get("/dashboard/api/counters/hits?precision=7"))
	fmt.Print(get("/dashboard/api/counters/nope?precision=5"))
	_ = rec.Close(context.Background())
	// Output:
	// 200 {"name":"hits","precision":5,"samples":[{"time":1700000000,"count":2}],"current":1700000000}
	// 400 {"error":"precision 7 is not kept; use one of [5 60 300 3600 18000 86400]"}
	// 404 {"error":"no such series at this precision"}
}
