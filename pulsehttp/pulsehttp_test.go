package pulsehttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestMain also starts the redis-server the Examples find in REDIS_URL.
func TestMain(m *testing.M) { redistest.Main(m) }

// recorder returns a Recorder over srv at the 5 s and 1 day precisions,
// flushed only when a test asks, closed when the test ends.
func recorder(t testing.TB, srv *redistest.Server, cfg timeseries.Config) *timeseries.Recorder {
	t.Helper()
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = time.Hour
	}
	return tracktest.NewRecorder(t, srv.Pool(), cfg)
}

// seriesCounts flushes rec and returns every series' total at the 1 day
// precision, read back from Redis.
func seriesCounts(t testing.TB, srv *redistest.Server, rec *timeseries.Recorder) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	members, err := redis.Strings(srv.Do("ZRANGE", "known:", 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, m := range members {
		if p, name, _ := timeseries.ParseKnownMember(m); p == 86400 {
			out[name] = srv.HashSum("count:" + m)
		}
	}
	return out
}

// notCounted is what Redis holds after requests that are not counted.
var notCounted = map[string]int64{}

// expect is the series a single counted request is in: hits and names.
func expect(names ...string) map[string]int64 {
	want := map[string]int64{"hits": 1}
	for _, n := range names {
		want[n]++
	}
	return want
}

func checkSeries(t *testing.T, got, want map[string]int64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) { // fmt sorts map keys
		t.Errorf("series = %v\nwant     %v", got, want)
	}
}

// blog is a ServeMux with every kind of pattern the route names cover.
func blog() *http.ServeMux {
	mux := http.NewServeMux()
	text := func(s string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, s) }
	}
	mux.HandleFunc("GET /posts/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "404" {
			http.NotFound(w, r) // the route's own 404: still this route
			return
		}
		io.WriteString(w, "post")
	})
	mux.HandleFunc("POST /posts", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })
	mux.HandleFunc("/articles/{id}", text("article")) // any method
	mux.HandleFunc("docs.example.com/", text("docs"))
	mux.HandleFunc("GET api.example.com/v1/{thing}", text("api"))
	mux.HandleFunc("/files/", text("files"))
	mux.HandleFunc("/users/{name}/", text("user"))
	mux.HandleFunc("GET\t/tabbed", text("tabbed"))
	mux.HandleFunc("GET /{$}", text("home"))
	return mux
}

func TestRouteNames(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name, method, target string
		code                 int
		want                 []string
	}{
		{"method in pattern", "GET", "/posts/7", 200, []string{"GET /posts/{id}", "status:2xx"}},
		{"no method in pattern", "GET", "/articles/7", 200, []string{"GET /articles/{id}", "status:2xx"}},
		{"no method in pattern, DELETE", "DELETE", "/articles/7", 200, []string{"DELETE /articles/{id}", "status:2xx"}},
		{"nonstandard method", "PROPFIND", "/articles/7", 200, []string{"OTHER /articles/{id}", "status:2xx"}},
		{"HEAD on a GET pattern", "HEAD", "/posts/7", 200, []string{"HEAD /posts/{id}", "status:2xx"}},
		{"POST", "POST", "/posts", 201, []string{"POST /posts", "status:2xx"}},
		{"exact root", "GET", "/", 200, []string{"GET /{$}", "status:2xx"}},
		{"tab after the method", "GET", "/tabbed", 200, []string{"GET /tabbed", "status:2xx"}},
		{"host pattern", "GET", "http://docs.example.com/intro", 200, []string{"GET docs.example.com/", "status:2xx"}},
		{"host pattern with method", "GET", "http://api.example.com/v1/users", 200, []string{"GET api.example.com/v1/{thing}", "status:2xx"}},
		{"matched route answers 404", "GET", "/posts/404", 404, []string{"GET /posts/{id}", "status:4xx"}},
		{"no route", "GET", "/nowhere/at/all", 404, []string{"unmatched", "status:4xx"}},
		{"405 from ServeMux", "DELETE", "/posts/7", 405, []string{"unmatched", "status:4xx"}},
		// The redirect target's pattern: bounded by the app's patterns.
		{"trailing-slash redirect", "GET", "/files", 307, []string{"GET /files/", "status:3xx"}},
		{"unclean path redirect", "GET", "/x/../posts/7", 307, []string{"GET /posts/{id}", "status:3xx"}},
		// ServeMux names the raw path here; as a series, every path a
		// client sends would be one.
		{"CONNECT trailing-slash redirect", "CONNECT", "/users/anyone", 307, []string{"unmatched", "status:3xx"}},
		{"CONNECT matched", "CONNECT", "/users/anyone/", 200, []string{"CONNECT /users/{name}/", "status:2xx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{})
			h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true})(blog())
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.target, nil))
			if w.Code != tt.code {
				t.Fatalf("status %d, want %d", w.Code, tt.code)
			}
			checkSeries(t, seriesCounts(t, srv, rec), expectRoute(tt.want[0], tt.want[1]))
		})
	}
}

// expectRoute is expect for a request counted in its route and status
// class with both on: the route's own status class too.
func expectRoute(route, class string) map[string]int64 {
	return expect(route, class, route+" "+class)
}

func TestPatternPath(t *testing.T) {
	tests := []struct{ method, target, pattern, want string }{
		{"GET", "/posts/7", "GET /posts/{id}", "/posts/{id}"},
		{"GET", "/posts/7", "/posts/{id}", "/posts/{id}"},
		{"GET", "/posts/7", "GET  \t/posts/{id}", "/posts/{id}"},
		{"GET", "/docs", "example.com/docs", "example.com/docs"},
		{"GET", "/x", "", ""},
		{"CONNECT", "/users/bob", "/users/bob/", ""},
		{"CONNECT", "/users/bob/", "/users/bob/", "/users/bob/"},
		{"CONNECT", "/a/../users/bob", "/users/bob/", ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		r.Pattern = tt.pattern
		if got := pulsehttp.PatternPath(r); got != tt.want {
			t.Errorf("PatternPath(%s %s, pattern %q) = %q, want %q", tt.method, tt.target, tt.pattern, got, tt.want)
		}
	}
}

// shop is a small router of the chi kind: it puts its route context on
// the request before its own middleware runs, and fills in the matched
// template while dispatching, so a RouteName reading that context after
// the handler returns sees it.
type shop struct {
	use    []func(http.Handler) http.Handler
	routes map[string]http.Handler // "/items/:id" style templates
}

type routeCtxKey struct{}

type routeCtx struct{ pattern string }

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := &routeCtx{}
	r = r.WithContext(context.WithValue(r.Context(), routeCtxKey{}, rc))
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for tmpl, route := range s.routes {
			if matchTemplate(tmpl, r.URL.Path) {
				rc.pattern = tmpl
				route.ServeHTTP(w, r)
				return
			}
		}
		http.NotFound(w, r)
	})
	for i := len(s.use) - 1; i >= 0; i-- {
		h = s.use[i](h)
	}
	h.ServeHTTP(w, r)
}

// matchTemplate matches "/items/:id" against "/items/7": same number of
// segments, ":" segments match any non-empty one.
func matchTemplate(tmpl, path string) bool {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if !(strings.HasPrefix(ts[i], ":") && ps[i] != "") && ts[i] != ps[i] {
			return false
		}
	}
	return true
}

func shopRouteName(r *http.Request) string {
	if rc, ok := r.Context().Value(routeCtxKey{}).(*routeCtx); ok {
		return rc.pattern
	}
	return ""
}

func TestRouteNameHook(t *testing.T) {
	srv := redistest.Start(t)
	newShop := func() *shop {
		return &shop{routes: map[string]http.Handler{
			"/items/:id": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "item") }),
		}}
	}
	tests := []struct {
		name, target string
		outside      bool // mounted around the router instead of with its Use
		want         []string
	}{
		{"matched", "/items/7", false, []string{"GET /items/:id"}},
		{"no route: empty name", "/nothing", false, []string{"unmatched"}},
		// Outside the router the route context does not exist yet.
		{"mounted outside the router", "/items/7", true, []string{"unmatched"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{})
			mw := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, Routes: true, RouteName: shopRouteName})
			s := newShop()
			var h http.Handler = s
			if tt.outside {
				h = mw(s)
			} else {
				s.use = append(s.use, mw)
			}
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", tt.target, nil))
			checkSeries(t, seriesCounts(t, srv, rec), expect(tt.want...))
		})
	}
}

func TestSeriesNameCap(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{MaxNames: 4})
	h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{
		Recorder: rec,
		SeriesName: func(r *http.Request) string {
			if tenant := r.Header.Get("X-Tenant"); tenant != "" {
				return "tenant:" + tenant
			}
			return ""
		},
	})(blog())
	do := func(tenant string) {
		r := httptest.NewRequest("GET", "/posts/1", nil)
		if tenant != "" {
			r.Header.Set("X-Tenant", tenant)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	do("")
	// hits and three tenants reach the cap of 4 names; the rest fold into
	// the overflow series, however many names clients make up.
	for i := range 10 {
		do(fmt.Sprintf("t%d", i))
	}
	do("t0")
	do("bad\x01name") // invalid: counted in hits only
	want := map[string]int64{"hits": 13, "tenant:t0": 2, "tenant:t1": 1, "tenant:t2": 1, "overflow": 7}
	checkSeries(t, seriesCounts(t, srv, rec), want)
	if n, _ := redis.Int(srv.Do("ZCARD", "known:"), nil); n != 2*len(want) {
		t.Errorf("known: holds %d members, want %d (5 names at 2 precisions)", n, 2*len(want))
	}
}

func TestConfigErrors(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	tests := []struct {
		name string
		cfg  pulsehttp.HitsConfig
		want string // the error's start
	}{
		{"no recorder", pulsehttp.HitsConfig{}, "pulsehttp: Recorder is nil"},
		{"invalid HitsName", pulsehttp.HitsConfig{Recorder: rec, HitsName: "a\nb"}, "pulsehttp: HitsName: "},
		{"invalid UnmatchedName", pulsehttp.HitsConfig{Recorder: rec, Routes: true, UnmatchedName: "a\x00"}, "pulsehttp: UnmatchedName: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mw, err := tt.cfg.ToMiddleware()
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || mw != nil {
				t.Fatalf("ToMiddleware: %v, %v; want an error starting %q", mw != nil, err, tt.want)
			}
			defer func() {
				p, _ := recover().(error)
				if p == nil || p.Error() != err.Error() {
					t.Errorf("Middleware panicked with %v, want %v", p, err)
				}
			}()
			pulsehttp.HitsWithConfig(tt.cfg)
		})
	}
	t.Run("Hits(nil)", func(t *testing.T) {
		defer func() {
			if p, _ := recover().(error); p == nil || p.Error() != "pulsehttp: Recorder is nil" {
				t.Errorf("Hits(nil) panicked with %v", p)
			}
		}()
		pulsehttp.Hits(nil)
	})
	if mw, err := (pulsehttp.HitsConfig{Recorder: rec, Routes: true}).ToMiddleware(); err != nil || mw == nil {
		t.Errorf("a valid config: %v", err)
	}
}

// Handlers that sleep known times: the durations recorded for hits and
// the route have their p50, p90 and p99 within the accuracy, plus the
// measured scheduling slack, of the exact ones. A finer accuracy holds
// too.
func TestDurations(t *testing.T) {
	srv := redistest.Start(t)
	for _, acc := range []float64{0, 0.01} {
		srv.FlushAll()
		rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour, DurationAccuracy: acc})
		sl := tracktest.NewSleeper(200)
		mux := http.NewServeMux()
		mux.HandleFunc("GET /sleep/{i}", func(w http.ResponseWriter, r *http.Request) {
			i, _ := strconv.Atoi(r.PathValue("i"))
			sl.Sleep(i)
		})
		h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, Routes: true})(mux)
		sl.Run(func(i int) {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", fmt.Sprintf("/sleep/%d", i), nil))
		})
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"hits", "GET /sleep/{i}"} {
			worst := tracktest.CheckQuantiles(t, rec, name, sl.Sleeps, sl.Overslept(), time.Millisecond)
			t.Logf("accuracy %g, %s: largest quantile error %.2f%% (overslept up to %v)", acc, name, worst*100, sl.Overslept())
		}
	}
}
