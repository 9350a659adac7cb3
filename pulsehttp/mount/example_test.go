package mount_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/pulsehttp/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

func ExampleDashboard() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL"))
	}}
	defer pool.Close()
	schema := timeseries.Schema{Prefix: "example-mount:"}
	rec, _ := timeseries.NewRecorder(timeseries.Config{Pool: pool, Schema: schema})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "home") })
	login := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if user, pass, ok := r.BasicAuth(); !ok || user != "ops" || pass != "s3cret" {
				http.Error(w, `{"error":"login required"}`, http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	app, err := mount.Dashboard(mux, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}, login)
	if err != nil {
		panic(err)
	}
	h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, Routes: true})(app)

	for _, path := range []string{"/", "/dashboard/", "/dashboard/../x", "/dashboard//evil.com"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, w.Code)
	}
	_ = rec.Close(context.Background())

	store, _ := timeseries.NewStore(pool, schema, nil)
	infos, _ := store.Series(context.Background())
	for _, s := range infos {
		fmt.Println("counted:", s.Name)
	}
	// Output:
	// / 200
	// /dashboard/ 401
	// /dashboard/../x 401
	// /dashboard//evil.com 401
	// counted: GET /{$}
	// counted: hits
}
