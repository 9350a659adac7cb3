package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// A net/http app counts its traffic with pulsehttp and serves the
// dashboard under /dashboard/; the dashboard's own requests are not
// counted. For Echo v4, see the middleware package's Mount.
func ExampleHandler() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL"))
	}}
	defer pool.Close()
	clock := timeseries.NewManualClock(time.Unix(1700000002, 0)) // a fixed time, for the output below
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, Clock: clock})
	if err != nil {
		panic(err)
	}
	h, err := dashboard.Handler(dashboard.Config{Store: rec.Store(), Health: rec})
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "home") })
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", h))
	mux.Handle("/dashboard", http.StripPrefix("/dashboard", h)) // redirects to /dashboard/
	app := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, HitsName: "example-handler"})(mux)

	get := func(path string) string {
		w := httptest.NewRecorder()
		app.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if loc := w.Header().Get("Location"); loc != "" {
			return fmt.Sprintf("%d Location: %s\n", w.Code, loc)
		}
		return fmt.Sprintf("%d %s", w.Code, w.Body)
	}
	get("/")
	get("/")
	get("/dashboard/") // not counted: the dashboard skips its own requests
	_ = rec.Flush(context.Background())

	fmt.Print(get("/dashboard/api/counters/example-handler?precision=5"))
	fmt.Print(get("/dashboard/api/counters/example-handler?precision=7"))
	fmt.Print(get("/dashboard"))
	_ = rec.Close(context.Background())
	// Output:
	// 200 {"name":"example-handler","precision":5,"samples":[{"time":1700000000,"count":2}],"current":1700000000}
	// 400 {"error":"precision 7 is not kept; use one of [5 60 300 3600 18000 86400]"}
	// 302 Location: ./dashboard/
}
