package pulsechi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/go-chi/chi/v5"
	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/pulsechi"
	"github.com/pulse-dev/pulse/timeseries"
)

func ExampleHitsWithConfig() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL"))
	}}
	defer pool.Close()
	schema := timeseries.Schema{Prefix: "example-chi:"}
	rec, _ := timeseries.NewRecorder(timeseries.Config{Pool: pool, Schema: schema})

	r := chi.NewRouter()
	r.Use(pulsechi.HitsWithConfig(pulsechi.HitsConfig{
		Recorder:      rec,
		Routes:        true, // "GET /posts/{id}", never the raw URL
		StatusClasses: true,
	}))
	r.Get("/posts/{id}", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "a post") })
	for _, path := range []string{"/posts/1", "/posts/2", "/nowhere"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	_ = rec.Close(context.Background()) // writes what is pending

	store, _ := timeseries.NewStore(pool, schema, nil)
	for _, name := range []string{"hits", "GET /posts/{id}", "GET /posts/{id} status:2xx", "unmatched status:4xx"} {
		samples, _ := store.Samples(context.Background(), name, 86400, timeseries.Range{})
		fmt.Println(name, samples[0].Count)
	}
	// Output:
	// hits 3
	// GET /posts/{id} 2
	// GET /posts/{id} status:2xx 2
	// unmatched status:4xx 1
}
