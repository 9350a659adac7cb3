package pulsehttp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// wrapped is a writer wrapper of another middleware (compression, say)
// that unwraps, as http.ResponseController asks of wrappers.
type wrapped struct{ http.ResponseWriter }

func (w wrapped) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// opaque wraps without Unwrap: nothing can see through it.
type opaque struct{ http.ResponseWriter }

func TestSkip(t *testing.T) {
	srv := redistest.Start(t)
	skipHere := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		timeseries.Skip(w)
		io.WriteString(w, "not counted")
	})
	through := func(wrap func(http.ResponseWriter) http.ResponseWriter) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { skipHere(wrap(w), r) })
	}
	tests := []struct {
		name    string
		handler http.Handler
		header  string // X-Health, which the Skipper skips on
		want    map[string]int64
	}{
		{"counted", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), "", expect("GET /")},
		{"Skipper", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), "1", notCounted},
		{"Skip in the handler", skipHere, "", notCounted},
		{"Skip through a wrapper with Unwrap", through(func(w http.ResponseWriter) http.ResponseWriter { return wrapped{w} }), "", notCounted},
		{"Skip through two wrappers", through(func(w http.ResponseWriter) http.ResponseWriter { return wrapped{wrapped{w}} }), "", notCounted},
		{"Skip through a wrapper without Unwrap", through(func(w http.ResponseWriter) http.ResponseWriter { return opaque{w} }), "", expect("GET /")},
		{"Skip after the Skipper", skipHere, "1", notCounted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{})
			mux := http.NewServeMux()
			mux.Handle("GET /", tt.handler)
			h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{
				Recorder: rec, Routes: true,
				Skipper: func(r *http.Request) bool { return r.Header.Get("X-Health") != "" },
			})(mux)
			r := httptest.NewRequest("GET", "/", nil)
			if tt.header != "" {
				r.Header.Set("X-Health", tt.header)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			checkSeries(t, seriesCounts(t, srv, rec), tt.want)
		})
	}
}

// Skip with no middleware around does nothing, whatever the writer.
func TestSkipOutsideMiddleware(t *testing.T) {
	for _, w := range []http.ResponseWriter{nil, httptest.NewRecorder(), wrapped{httptest.NewRecorder()}, opaque{httptest.NewRecorder()}, wrapped{}} {
		timeseries.Skip(w)
	}
	w := httptest.NewRecorder()
	skipHere := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		timeseries.Skip(w)
		io.WriteString(w, "served")
	})
	skipHere.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 200 || w.Body.String() != "served" {
		t.Errorf("%d %q", w.Code, w.Body.String())
	}
}

// A request skipped does not leave its mark on the next one, though the
// writers are pooled.
func TestSkipDoesNotLeak(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	h := pulsehttp.Hits(rec)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/skip" {
			timeseries.Skip(w)
		}
	}))
	for range 50 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/skip", nil))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}
	checkSeries(t, seriesCounts(t, srv, rec), map[string]int64{"hits": 50})
}

// Many clients at once through a real server: every hit is in Redis, once,
// at every precision.
func TestExactUnderConcurrency(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: 20 * time.Millisecond})
	h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true})(blog())
	ts := httptest.NewServer(h)
	defer ts.Close()

	const goroutines, each = 32, 250
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: goroutines}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				path := fmt.Sprintf("/posts/%d-%d", g, i)
				if i%2 == 1 {
					path = fmt.Sprintf("/nowhere/%d-%d", g, i)
				}
				resp, err := client.Get(ts.URL + path)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	const n = goroutines * each
	want := map[string]int64{"hits": n, "GET /posts/{id}": n / 2, "unmatched": n / 2, "status:2xx": n / 2, "status:4xx": n / 2}
	for name, count := range want {
		for _, p := range []int{5, 86400} {
			if got := srv.HashSum(fmt.Sprintf("count:%d:%s", p, name)); got != count {
				t.Errorf("%s at precision %d: %d hits, want %d", name, p, got, count)
			}
		}
	}
}

// An app that counts into two Recorders, with one middleware inside the
// other: a request marked once is left out by both.
func TestSkipNested(t *testing.T) {
	srv := redistest.Start(t)
	outerRec := recorder(t, srv, timeseries.Config{})
	innerRec := recorder(t, srv, timeseries.Config{})
	h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: outerRec, HitsName: "outer"})(
		pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: innerRec, HitsName: "inner"})(
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/skip" {
					timeseries.Skip(w)
				}
			})))
	for _, p := range []string{"/", "/skip", "/", "/skip", "/skip"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	seriesCounts(t, srv, outerRec)
	checkSeries(t, seriesCounts(t, srv, innerRec), map[string]int64{"outer": 2, "inner": 2})
}

// The dashboard mounted on the app's mux marks its own requests: none is
// counted, its 404s included, while the app's are.
func TestSkipDashboard(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	dash, err := dashboard.Handler(dashboard.Config{Store: rec.Store(), Health: rec, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", dash))
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "app") })
	h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true})(mux)
	for _, tt := range []struct {
		target string
		code   int
	}{{"/dashboard/", 200}, {"/dashboard/api/counters", 200}, {"/dashboard/nope", 404}, {"/app", 200}, {"/dashboard/", 200}} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", tt.target, nil))
		if w.Code != tt.code {
			t.Errorf("%s: status %d, want %d", tt.target, w.Code, tt.code)
		}
	}
	checkSeries(t, seriesCounts(t, srv, rec), map[string]int64{"hits": 1, "GET /app": 1, "status:2xx": 1, "GET /app status:2xx": 1})
}
