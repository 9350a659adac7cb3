package pulsegin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/gin-gonic/gin"
	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/pulsegin"
	"github.com/pulse-dev/pulse/timeseries"
)

func ExampleHitsWithConfig() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL"))
	}}
	defer pool.Close()
	schema := timeseries.Schema{Prefix: "example-gin:"}
	rec, _ := timeseries.NewRecorder(timeseries.Config{Pool: pool, Schema: schema})

	r := gin.New()
	r.Use(pulsegin.HitsWithConfig(pulsegin.HitsConfig{
		Recorder:      rec,
		Routes:        true, // "GET /posts/:id", never the raw URL
		StatusClasses: true,
	}))
	r.GET("/posts/:id", func(c *gin.Context) { c.String(http.StatusOK, "a post") })
	for _, path := range []string{"/posts/1", "/posts/2", "/nowhere"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	_ = rec.Close(context.Background()) // writes what is pending

	store, _ := timeseries.NewStore(pool, schema, nil)
	for _, name := range []string{"hits", "GET /posts/:id", "GET /posts/:id status:2xx", "unmatched status:4xx"} {
		samples, _ := store.Samples(context.Background(), name, 86400, timeseries.Range{})
		fmt.Println(name, samples[0].Count)
	}
	// Output:
	// hits 3
	// GET /posts/:id 2
	// GET /posts/:id status:2xx 2
	// unmatched status:4xx 1
}
