package pulsechi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/pulsechi"
	"github.com/pulse-dev/pulse/pulsehttp/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) {
	chi.RegisterMethod("PROPFIND") // chi answers 405 to methods it does not know
	redistest.Main(m)
}

// daily flushes rec and reads every series' total at the 1 day precision
// back through the Store, as any user of the package can.
func daily(t *testing.T, rec *timeseries.Recorder) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	store := rec.Store()
	infos, err := store.Series(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, info := range infos {
		samples, err := store.Samples(ctx, info.Name, 86400, timeseries.Range{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			out[info.Name] += s.Count
		}
	}
	return out
}

// shop is a chi router counted by rec, with a subrouter, a route that
// answers errors and one that answers a status outside 100 to 599.
func shop(rec *timeseries.Recorder) http.Handler {
	r := chi.NewRouter()
	r.Use(pulsechi.HitsWithConfig(pulsechi.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	r.Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(chi.URLParam(r, "id"))
		if code >= 100 {
			w.WriteHeader(code)
		}
		io.WriteString(w, "item")
	})
	r.Post("/items", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })
	r.Route("/api", func(r chi.Router) {
		r.Get("/v1/{thing}", func(w http.ResponseWriter, r *http.Request) {})
	})
	r.HandleFunc("/any", func(w http.ResponseWriter, r *http.Request) {})
	r.Get("/files/*", func(w http.ResponseWriter, r *http.Request) {})
	return r
}

// Every request counts exactly once in hits, its route and its status
// class, and in its route's status class, by the names the shipped
// adapters give them.
func TestRoutesAndStatusClasses(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name, method, target string
		code                 int
		want                 []string
	}{
		{"route", "GET", "/items/7", 200, []string{"GET /items/{id}", "status:2xx"}},
		{"route answers 404", "GET", "/items/404", 404, []string{"GET /items/{id}", "status:4xx"}},
		{"route answers 503", "GET", "/items/503", 503, []string{"GET /items/{id}", "status:5xx"}},
		{"status outside 100 to 599", "GET", "/items/600", 600, []string{"GET /items/{id}", "status:other"}},
		{"POST", "POST", "/items", 201, []string{"POST /items", "status:2xx"}},
		{"subrouter", "GET", "/api/v1/users", 200, []string{"GET /api/v1/{thing}", "status:2xx"}},
		{"nonstandard method", "PROPFIND", "/any", 200, []string{"OTHER /any", "status:2xx"}},
		{"no route", "GET", "/nowhere", 404, []string{"unmatched", "status:4xx"}},
		{"method not allowed", "DELETE", "/items/7", 405, []string{"unmatched", "status:4xx"}},
		{"no route in a subrouter", "GET", "/api/nowhere", 404, []string{"unmatched", "status:4xx"}},
		{"method not allowed in a subrouter", "POST", "/api/v1/users", 405, []string{"unmatched", "status:4xx"}},
		{"catch-all route", "GET", "/files/a/b", 200, []string{"GET /files/*", "status:2xx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := tracktest.NewRecorder(t, srv.Pool(), timeseries.Config{FlushInterval: time.Hour})
			w := httptest.NewRecorder()
			shop(rec).ServeHTTP(w, httptest.NewRequest(tt.method, tt.target, nil))
			if w.Code != tt.code {
				t.Fatalf("answered %d, want %d", w.Code, tt.code)
			}
			want := map[string]int64{"hits": 1, tt.want[0]: 1, tt.want[1]: 1, tt.want[0] + " " + tt.want[1]: 1}
			if got := daily(t, rec); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("series = %v\nwant     %v", got, want)
			}
		})
	}
}

// Requests from four goroutines: Redis holds every one of them, in each
// of its series, with as many durations as hits; the quantiles of the
// durations are within the accuracy of those the handlers slept.
func TestHitsAndDurations(t *testing.T) {
	srv := redistest.Start(t)
	rec := tracktest.NewRecorder(t, srv.Pool(), timeseries.Config{FlushInterval: time.Hour})
	sl := tracktest.NewSleeper(200)
	r := chi.NewRouter()
	r.Use(pulsechi.HitsWithConfig(pulsechi.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	r.Get("/sleep/{i}", func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(chi.URLParam(r, "i"))
		sl.Sleep(i)
	})
	sl.Run(func(i int) {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", fmt.Sprintf("/sleep/%d", i), nil))
	})
	n := int64(len(sl.Sleeps))
	want := map[string]int64{"hits": n, "GET /sleep/{i}": n, "status:2xx": n, "GET /sleep/{i} status:2xx": n}
	if got := daily(t, rec); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("series = %v\nwant     %v", got, want)
	}
	do := func(key, cmd string, args ...any) any { return srv.Do(cmd, args...) }
	for _, name := range []string{"hits", "GET /sleep/{i}"} {
		tracktest.CheckLat(t, do, []int{5, 86400}, name, n)
		worst := tracktest.CheckQuantiles(t, rec, name, sl.Sleeps, sl.Overslept(), time.Millisecond)
		t.Logf("%s: largest quantile error %.2f%% (overslept up to %v)", name, worst*100, sl.Overslept())
	}
	// The status series are counts only.
	d, err := rec.Store().LastDurations(context.Background(), "status:2xx", 86400, 1)
	if err != nil || d.Window.Count() != 0 {
		t.Errorf("status:2xx: %d durations (%v), want none", d.Window.Count(), err)
	}
}

// One client forging 40 X-Forwarded-For addresses is one visitor: the
// adapter reads the connection's address only. With visitors off none is
// counted.
func TestVisitors(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name string
		cfg  timeseries.Config
		want []timeseries.Visitor
	}{
		{"visitors on", timeseries.Config{FlushInterval: time.Hour}, tracktest.ForgedClient()},
		{"visitors off", timeseries.Config{FlushInterval: time.Hour, DisableVisitors: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := tracktest.NewRecorder(t, srv.Pool(), tt.cfg)
			tracktest.Flush(t, rec)
			h := shop(rec)
			for _, req := range tracktest.ForgedRequests(40) {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
			tracktest.AssertDayVisitors(t, srv.Do, rec, "hits", tt.want)
		})
	}
}

// The dashboard mounted in front of the router (pulsehttp/mount) is never
// counted, whatever the path under its prefix: only the app's own
// request is.
func TestDashboardNotCounted(t *testing.T) {
	srv := redistest.Start(t)
	rec := tracktest.NewRecorder(t, srv.Pool(), timeseries.Config{FlushInterval: time.Hour})
	r := chi.NewRouter()
	r.Use(pulsechi.HitsWithConfig(pulsechi.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {})
	h, err := mount.Dashboard(r, "/dashboard", dashboard.Config{Store: rec.Store()})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/dashboard/", "/dashboard/api/counters", "/dashboard/api/health", "/dashboard/../x", "/dashboard//x", "/"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		if w.Code >= 500 {
			t.Fatalf("%s answered %d", target, w.Code)
		}
	}
	want := map[string]int64{"hits": 1, "GET /": 1, "status:2xx": 1, "GET / status:2xx": 1}
	if got := daily(t, rec); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("series = %v\nwant     %v", got, want)
	}
}
