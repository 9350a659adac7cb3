package adaptertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/timeseries"
)

const prefix = "/dashboard"

// dashboardPaths are requests under the prefix, dot segments, empty
// segments and escapes among them, with the methods a client may send.
var dashboardPaths = []struct{ method, path string }{
	{"GET", "/dashboard"}, {"GET", "/dashboard/"}, {"GET", "/dashboard/api/health"},
	{"GET", "/dashboard/api/counters?precision=5"}, {"GET", "/dashboard/no/such/page"},
	{"POST", "/dashboard/api/health"}, {"DELETE", "/dashboard/api/counters"}, {"PROPFIND", "/dashboard/x"},
	{"GET", "/dashboard/./api/health"}, {"GET", "/dashboard/api//health"}, {"GET", "/dashboard//evil.com"},
	{"GET", "/dashboard//evil.com/"}, {"GET", "/dashboard/.."}, {"GET", "/dashboard/../../x"},
	{"GET", "/dashboard/%2e%2e"}, {"GET", "/dashboard/%5Cevil.com/."}, {"GET", "/dashboard/api/%2e%2e/%2e%2e/x"},
}

// send sends method and path as they are written, over a fresh
// connection, with a body that is not JSON, the header h, and returns the
// answer with its body read.
func send(t testing.TB, base, method, path string, h http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, base, strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = path // no client cleaning: the path as written
	if i := strings.IndexByte(path, '?'); i >= 0 {
		req.URL.Opaque, req.URL.RawQuery = path[:i], path[i+1:]
	}
	if h != nil {
		req.Header = h.Clone()
	}
	req.Header.Set("Content-Type", "text/plain")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// underPrefix checks an answer of the dashboard: a redirect stays under
// the prefix on the same host, a refusal is a JSON error, nothing fails.
func underPrefix(t testing.TB, method, path string, resp *http.Response, body string) {
	t.Helper()
	switch resp.StatusCode / 100 {
	case 3:
		raw := resp.Header.Get("Location")
		loc, err := url.Parse(raw)
		if err != nil || loc.Host != "" || strings.HasPrefix(raw, "//") || strings.HasPrefix(raw, `/\`) || strings.Contains(raw, "://") {
			t.Errorf("%s %s: Location %q leaves the host", method, path, resp.Header.Get("Location"))
			return
		}
		if to := resp.Request.URL.ResolveReference(loc).Path; to != prefix+"/" && !strings.HasPrefix(to, prefix+"/") {
			t.Errorf("%s %s: redirected to %s, out of %s", method, path, to, prefix)
		}
	case 4:
		var e struct{ Error string }
		if json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
			t.Errorf("%s %s: %d without a JSON error: %.100s", method, path, resp.StatusCode, body)
		}
	case 5:
		t.Errorf("%s %s: %d", method, path, resp.StatusCode)
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("%s %s: no dashboard security headers", method, path)
	}
}

// The mounted dashboard answers every request under its prefix, of any
// method, dot segments and "//" included, keeping its redirects under
// the prefix; none of its requests, redirects or refusals is counted.
func testDashboard(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	d := &Dashboard{Prefix: prefix, Recorder: rec}
	s := k.serve(t, App{Recorders: []*timeseries.Recorder{rec}, Routes: basicRoutes(), Dashboard: d})
	for _, r := range dashboardPaths {
		resp, body := send(t, s.URL(), r.method, r.path, nil)
		underPrefix(t, r.method, r.path, resp, body)
	}
	if resp, _ := send(t, s.URL(), "GET", "/dashboard/", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the page: %d", resp.StatusCode)
	}
	s.hit(t, http.MethodGet, "/status/200") // the app's own, counted
	s.wait()
	st := k.name(http.MethodGet, "/status/{code}")
	k.exact(t, rec, map[string]int64{"hits": 1, st: 1, "status:2xx": 1, st + " status:2xx": 1})
}

// refuse is a login that lets in only the requests with X-Kit-Login: yes.
func refuse(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Kit-Login") != "yes" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"login required"}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// A login in front of the dashboard answers every request under the
// prefix before the dashboard does, with the dashboard's security
// headers; neither its refusals nor what it lets through is counted.
func testDashboardLogin(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	d := &Dashboard{Prefix: prefix, Recorder: rec, Login: refuse}
	s := k.serve(t, App{Recorders: []*timeseries.Recorder{rec}, Routes: basicRoutes(), Dashboard: d})
	in := http.Header{"X-Kit-Login": {"yes"}}
	for _, r := range dashboardPaths {
		if resp, _ := send(t, s.URL(), r.method, r.path, nil); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s %s without the login: %d, want the login's 401 with the dashboard's headers", r.method, r.path, resp.StatusCode)
		}
		resp, body := send(t, s.URL(), r.method, r.path, in)
		underPrefix(t, r.method, r.path, resp, body)
	}
	if resp, _ := send(t, s.URL(), "GET", "/dashboard/api/health", in); resp.StatusCode != http.StatusOK {
		t.Errorf("api/health past the login: %d", resp.StatusCode)
	}
	s.hit(t, http.MethodGet, "/status/200")
	s.wait()
	st := k.name(http.MethodGet, "/status/{code}")
	k.exact(t, rec, map[string]int64{"hits": 1, st: 1, "status:2xx": 1, st + " status:2xx": 1})
}
