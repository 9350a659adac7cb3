package echov5_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v5"

	"github.com/pulse-dev/pulse/echov5"
	"github.com/pulse-dev/pulse/timeseries"
)

func ExampleHitsWithConfig() {
	// Any Redis will do; the tests name theirs in REDIS_URL.
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.DialURL(os.Getenv("REDIS_URL")) }}
	defer pool.Close()

	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool})
	if err != nil {
		fmt.Println(err)
		return
	}
	e := echo.New()
	e.Use(echov5.HitsWithConfig(echov5.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	e.GET("/posts/:id", func(c *echo.Context) error { return c.String(http.StatusOK, "a post") })
	for _, path := range []string{"/posts/1", "/posts/2", "/nowhere"} {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	_ = rec.Close(context.Background()) // writes what is pending

	store, _ := timeseries.NewStore(pool, timeseries.Schema{}, nil)
	series, _ := store.Series(context.Background())
	for _, s := range series {
		samples, _ := store.Samples(context.Background(), s.Name, 86400, timeseries.Range{})
		fmt.Println(s.Name, samples[0].Count)
	}
	// Output:
	// GET /posts/:id 2
	// GET /posts/:id status:2xx 2
	// hits 3
	// status:2xx 2
	// status:4xx 1
	// unmatched 1
	// unmatched status:4xx 1
}
