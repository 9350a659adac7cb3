package adapter_test

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

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// hits is the whole adapter for a router that is an http.Handler and
// names the matched template through route, read after the handler ran.
func hits(cfg adapter.HitsConfig[*http.Request], route func(*http.Request) string) (func(http.Handler) http.Handler, error) {
	m, err := cfg.Meter(adapter.HTTP(func(r *http.Request) *http.Request { return r }, nil))
	if err != nil {
		return nil, fmt.Errorf("myrouter: %w", err)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if m.Skip(r) {
				next.ServeHTTP(rw, r)
				return
			}
			start, w, finished := m.Begin(), adapter.NewWriter(rw), false
			defer func() { // also when the handler panics
				if !w.Skipped() {
					m.Count(r, r.Method, route(r), w.Status(finished), m.Elapsed(start))
				}
				w.Release()
			}()
			next.ServeHTTP(w, r)
			finished = true
		})
	}, nil
}

// An adapter for another router: ServeMux stands in for it here.
func Example() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL"))
	}}
	defer pool.Close()
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool,
		// Keys of its own, so that each run starts from zero.
		Schema: timeseries.Schema{Prefix: "example" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/posts/{id}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "a post") })
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { timeseries.Skip(w) })
	mw, err := hits(adapter.HitsConfig[*http.Request]{Recorder: rec, Routes: true, StatusClasses: true},
		func(r *http.Request) string { return r.Pattern })
	if err != nil {
		fmt.Println(err)
		return
	}
	h := mw(mux)
	for _, req := range []struct{ method, target string }{{"GET", "/posts/1"}, {"PROPFIND", "/posts/2"}, {"GET", "/nowhere"}, {"GET", "/healthz"}} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(req.method, req.target, nil))
	}
	_ = rec.Close(context.Background()) // writes what is pending
	series, _ := rec.Store().Series(context.Background())
	for _, s := range series {
		samples, _ := rec.Store().Samples(context.Background(), s.Name, 86400, timeseries.Range{})
		fmt.Println(s.Name, samples[0].Count)
	}
	// Output:
	// GET /posts/{id} 1
	// GET /posts/{id} status:2xx 1
	// OTHER /posts/{id} 1
	// OTHER /posts/{id} status:2xx 1
	// hits 3
	// status:2xx 2
	// status:4xx 1
	// unmatched 1
	// unmatched status:4xx 1
}

func ExampleRouteSeries() {
	fmt.Println(adapter.RouteSeries("GET", "/posts/:id"))
	fmt.Println(adapter.RouteSeries("PROPFIND", "/posts/:id"))
	fmt.Println(adapter.RouteSeries("DELETE", "/posts/{id}") + " " + adapter.StatusClassName(503))
	// Output:
	// GET /posts/:id
	// OTHER /posts/:id
	// DELETE /posts/{id} status:5xx
}
