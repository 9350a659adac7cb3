package pulseecho_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/pulseecho/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

// mounted is an Echo app counted by Hits (hits, routes, status classes)
// with the dashboard mounted under /dashboard behind a BasicAuth login.
func mounted(t *testing.T) (*redistest.Server, *timeseries.Recorder, *httptest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	e := echo.New()
	e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	e.GET("/app", func(c echo.Context) error { return c.String(http.StatusOK, "app") })
	login := echomw.BasicAuth(func(u, p string, _ echo.Context) (bool, error) { return u == "admin" && p == "secret", nil })
	if err := mount.Dashboard(e, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}, login); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	return srv, rec, ts
}

type answer struct {
	status int
	header http.Header
	body   string
}

func send(t *testing.T, method, url string, login bool) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if login {
		req.SetBasicAuth("admin", "secret")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

var dashboardHeaders = map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"}

// TestMountLoginRefusedNotCounted: the guard runs before the login, so
// requests the login refuses are not counted as traffic, and its 401s
// carry the dashboard's security headers; the app's own requests still
// count.
func TestMountLoginRefusedNotCounted(t *testing.T) {
	srv, rec, ts := mounted(t)
	paths := []string{"/dashboard", "/dashboard/", "/dashboard/static/dashboard.js", "/dashboard/api/overview?precision=5", "/dashboard/nope"}
	for _, p := range paths {
		for _, method := range []string{http.MethodGet, http.MethodPost, "PURGE"} {
			r := send(t, method, ts.URL+p, false)
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s %s without login: %d", method, p, r.status)
			}
			for h, want := range dashboardHeaders {
				if got := r.header.Get(h); got != want {
					t.Errorf("%s %s 401: %s = %q, want %q", method, p, h, got, want)
				}
			}
		}
	}
	if r := send(t, http.MethodGet, ts.URL+"/dashboard/api/counters", true); r.status != http.StatusOK {
		t.Errorf("with login: %d %s", r.status, r.body)
	}
	send(t, http.MethodGet, ts.URL+"/app", false)
	got := seriesCounts(t, srv, rec)
	if got["hits"] != 1 {
		t.Errorf("hits = %d after one app request and %d refused dashboard requests, want 1", got["hits"], 3*len(paths))
	}
	if got["status:4xx"] != 0 {
		t.Errorf("status:4xx = %d: refused dashboard requests were counted", got["status:4xx"])
	}
}

// TestMountDashboardNotCounted: past the login, the dashboard answers
// under the prefix (the root redirect, escaped names, its 404 and 405)
// and none of its requests is counted.
func TestMountDashboardNotCounted(t *testing.T) {
	srv, rec, ts := mounted(t)
	c, err := rec.Counter("GET /posts/:id")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.Inc()
	}
	send(t, http.MethodGet, ts.URL+"/app", false)
	before := seriesCounts(t, srv, rec)

	r := send(t, http.MethodGet, ts.URL+"/dashboard?x=1", true)
	if r.status != http.StatusFound || r.header.Get("Location") != "./dashboard/?x=1" {
		t.Errorf("root without slash: %d Location %q", r.status, r.header.Get("Location"))
	}
	if r := send(t, http.MethodGet, ts.URL+"/dashboard/", true); r.status != http.StatusOK || !strings.Contains(r.body, "pulse-config") {
		t.Errorf("page: %d", r.status)
	}
	r = send(t, http.MethodGet, ts.URL+"/dashboard/api/counters/GET%20%2Fposts%2F%3Aid?precision=86400", true)
	if r.status != http.StatusOK || !strings.Contains(r.body, `"name":"GET /posts/:id"`) || !strings.Contains(r.body, `"count":3`) {
		t.Errorf("escaped name under the prefix: %d %s", r.status, r.body)
	}
	if r := send(t, http.MethodGet, ts.URL+"/dashboard/api/counters/100%25?precision=5", true); r.status != http.StatusNotFound {
		t.Errorf(`"100%%", unknown: %d %s`, r.status, r.body) // decoded once, not twice
	}
	if r := send(t, http.MethodGet, ts.URL+"/dashboard/no/such/page", true); r.status != http.StatusNotFound || !strings.Contains(r.body, `"error"`) {
		t.Errorf("unknown page: %d %s", r.status, r.body)
	}
	for _, method := range []string{http.MethodPost, "PURGE"} {
		r := send(t, method, ts.URL+"/dashboard/api/counters", true)
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d Allow %q", method, r.status, r.header.Get("Allow"))
		}
	}

	after := seriesCounts(t, srv, rec)
	for _, name := range []string{"hits", "status:2xx", "status:3xx", "status:4xx", "GET /dashboard/*", "unmatched"} {
		if after[name] != before[name] {
			t.Errorf("%s went from %d to %d: dashboard requests were counted", name, before[name], after[name])
		}
	}
	if before["hits"] != 1 {
		t.Errorf("hits = %d after one app request, want 1", before["hits"])
	}
}

func TestMountErrors(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, prefix string
		cfg          dashboard.Config
		want         string
	}{
		{"no store", "/dashboard", dashboard.Config{}, "mount: dashboard: "},
		{"bad config", "/dashboard", dashboard.Config{Store: store, Overview: -1}, "mount: dashboard: "},
		{"relative prefix", "dashboard", dashboard.Config{Store: store}, "mount: dashboard: "},
		{"root", "/", dashboard.Config{Store: store}, "mount: dashboard: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := mount.Dashboard(echo.New(), tt.prefix, tt.cfg); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %v, want one starting %q", err, tt.want)
			}
		})
	}
}
