package mount_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/pulsehttp/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// refuse is a login that lets no one in.
func refuse(http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"login required"}`, http.StatusUnauthorized)
	})
}

// counted serves a ServeMux with the dashboard mounted at /dashboard in
// front of it behind login, the whole counted by pulsehttp with routes
// and status classes.
func counted(t *testing.T, srv *redistest.Server, login ...func(http.Handler) http.Handler) (*timeseries.Recorder, *httptest.Server) {
	t.Helper()
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(t.Context()) })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app", func(http.ResponseWriter, *http.Request) {})
	h, err := mount.Dashboard(mux, "/dashboard/", dashboard.Config{Store: rec.Store(), Health: rec}, login...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true})(h))
	t.Cleanup(ts.Close)
	return rec, ts
}

// known lists the series the recorder wrote.
func known(t *testing.T, srv *redistest.Server, rec *timeseries.Recorder) []string {
	t.Helper()
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	members, err := redis.Strings(srv.Do("ZRANGE", "known:", 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	return members
}

// Paths with dot segments and "//" under the prefix are the dashboard's
// to redirect, under the prefix, not ServeMux's, whose redirect leaves
// it; and none of them, nor any other request of the dashboard, is
// counted: no series at all is written.
func TestDashboardDotSegmentsNotCounted(t *testing.T) {
	srv := redistest.Start(t)
	rec, ts := counted(t, srv)
	dashtest.CheckDotSegments(t, ts.Listener.Addr().String(), false)
	for _, p := range []string{"/dashboard", "/dashboard/", "/dashboard/api/health", "/dashboard/nope"} {
		resp, err := http.Post(ts.URL+p, "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := known(t, srv, rec); len(got) != 0 {
		t.Errorf("dashboard requests were counted: %v", got)
	}
}

// A login that refuses answers every request under the prefix, with the
// dashboard's security headers, and none is counted; the app's requests
// pass by it and are.
func TestDashboardLoginRefuses(t *testing.T) {
	srv := redistest.Start(t)
	rec, ts := counted(t, srv, refuse)
	for _, p := range []string{"/dashboard", "/dashboard/", "/dashboard/api/health", "/dashboard/../app", "/dashboard//x"} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: %d, X-Frame-Options %q; want 401 with the dashboard's headers", p, resp.StatusCode, resp.Header.Get("X-Frame-Options"))
		}
	}
	resp, err := http.Get(ts.URL + "/app")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"hits": 1, "GET /app": 1, "status:4xx": 0, "unmatched": 0} {
		if got := srv.HashSum("count:86400:" + name); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
}

func TestDashboardErrors(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		prefix string
		cfg    dashboard.Config
	}{
		{"/dashboard", dashboard.Config{}},
		{"dashboard", dashboard.Config{Store: store}},
		{"/", dashboard.Config{Store: store}},
		{"/d/{x}", dashboard.Config{Store: store}},
		{"/a//b", dashboard.Config{Store: store}},
	} {
		if _, err := mount.Dashboard(http.NewServeMux(), tt.prefix, tt.cfg); err == nil || !strings.HasPrefix(err.Error(), "mount: dashboard: ") {
			t.Errorf("prefix %q: %v, want an error", tt.prefix, err)
		}
	}
}
