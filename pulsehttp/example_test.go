package pulsehttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

func ExampleHitsWithConfig() {
	redisURL := os.Getenv("REDIS_URL") // e.g. redis://127.0.0.1:6379/0
	pool := &redis.Pool{MaxIdle: 4, DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, redisURL, redis.DialConnectTimeout(time.Second),
			redis.DialReadTimeout(2*time.Second), redis.DialWriteTimeout(2*time.Second))
	}}
	defer pool.Close()

	rec, err := timeseries.NewRecorder(timeseries.Config{
		Pool: pool,
		// Keys of its own, so that each run starts from zero however many
		// ran against this Redis before; an app sets a fixed prefix.
		Schema: timeseries.Schema{Prefix: "example" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /posts/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "post "+r.PathValue("id"))
	})
	h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true})(mux)

	for _, target := range []string{"/posts/1", "/posts/2", "/nowhere"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
	}
	if err := rec.Close(context.Background()); err != nil { // writes what is pending
		fmt.Println(err)
		return
	}

	series, _ := rec.Store().Series(context.Background())
	for _, s := range series {
		samples, _ := rec.Store().Samples(context.Background(), s.Name, 86400, timeseries.Range{})
		var total int64
		for _, sample := range samples {
			total += sample.Count
		}
		fmt.Println(s.Name, total)
	}
	// Output:
	// GET /posts/{id} 2
	// GET /posts/{id} status:2xx 2
	// hits 3
	// status:2xx 2
	// status:4xx 1
	// unmatched 1
	// unmatched status:4xx 1
}
