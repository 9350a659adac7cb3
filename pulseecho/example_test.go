package pulseecho_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/timeseries"
)

// redisPool dials the Redis in REDIS_URL, as an app would.
func redisPool() *redis.Pool {
	return &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL"))
	}}
}

func ExampleHitsWithConfig() {
	pool := redisPool()
	defer pool.Close()

	rec, _ := timeseries.NewRecorder(timeseries.Config{Pool: pool})
	e := echo.New()
	e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{
		Recorder:      rec,
		HitsName:      "example-hits",
		Routes:        true, // "GET /posts/:id", never the raw URL
		StatusClasses: true,
	}))
	e.GET("/posts/:id", func(c echo.Context) error { return c.String(http.StatusOK, "a post") })
	for _, path := range []string{"/posts/1", "/posts/2", "/nowhere"} {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	_ = rec.Close(context.Background()) // writes what is pending

	store, _ := timeseries.NewStore(pool, timeseries.Schema{}, nil)
	for _, name := range []string{"GET /posts/:id", "GET /posts/:id status:2xx", "example-hits", "status:2xx", "status:4xx", "unmatched", "unmatched status:4xx"} {
		samples, _ := store.Samples(context.Background(), name, 86400, timeseries.Range{})
		fmt.Println(name, samples[0].Count)
	}
	// Output:
	// GET /posts/:id 2
	// GET /posts/:id status:2xx 2
	// example-hits 3
	// status:2xx 2
	// status:4xx 1
	// unmatched 1
	// unmatched status:4xx 1
}
