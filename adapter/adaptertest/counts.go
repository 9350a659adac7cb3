package adaptertest

import (
	"net/http"
	"net/http/httptest"
	"path"
	"strconv"
	"testing"

	"github.com/pulse-dev/pulse/timeseries"
)

// statusHandler answers the status its path ends with ("/status/503").
var statusHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	code, err := strconv.Atoi(path.Base(r.URL.Path))
	if err != nil {
		code = http.StatusBadRequest
	}
	w.WriteHeader(code)
})

// basicRoutes are the routes most rows serve.
func basicRoutes() []Route {
	return []Route{
		{http.MethodGet, "/status/{code}", statusHandler},
		{http.MethodPost, "/items", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
		})},
	}
}

// hit serves one request through h, with no server in between.
func hit(h http.Handler, method, target string) int {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w.Code
}

// Every request counts once, at each of the six precisions, in hits, its
// route, its status class and its route's class; a route's own 404 stays
// under the route; a status outside 100 to 599 is "status:other".
func testCounts(t *testing.T, k *kit) {
	rec := k.recorder(t, k.prefix)
	h := k.serve(t, []*timeseries.Recorder{rec}, basicRoutes(), nil)
	sent := map[string]int{"/status/200": 3, "/status/204": 1, "/status/302": 2, "/status/404": 2, "/status/503": 1, "/status/600": 1}
	for target, n := range sent {
		for range n {
			hit(h, http.MethodGet, target)
		}
	}
	for range 2 {
		if code := hit(h, http.MethodPost, "/items"); code != http.StatusCreated {
			t.Fatalf("POST /items answered %d", code)
		}
	}
	st := k.name(http.MethodGet, "/status/{code}")
	items := k.name(http.MethodPost, "/items")
	k.exact(t, rec, map[string]int64{
		"hits": 12, st: 10, items: 2,
		"status:2xx": 6, "status:3xx": 2, "status:4xx": 2, "status:5xx": 1, "status:other": 1,
		st + " status:2xx": 4, st + " status:3xx": 2, st + " status:4xx": 2, st + " status:5xx": 1,
		st + " status:other": 1, items + " status:2xx": 2,
	})
}

// A request no route matched (the router's own 404) and one whose method
// the route does not take (its 405, or 404) count under "unmatched",
// never under a name from the path.
func testUnmatched(t *testing.T, k *kit) {
	rec := k.recorder(t, k.prefix)
	h := k.serve(t, []*timeseries.Recorder{rec}, basicRoutes(), nil)
	for _, r := range []struct{ method, target string }{
		{http.MethodGet, "/nowhere"}, {http.MethodGet, "/nowhere/7"}, {http.MethodDelete, "/items"},
	} {
		if code := hit(h, r.method, r.target); code != http.StatusNotFound && code != http.StatusMethodNotAllowed {
			t.Errorf("%s %s answered %d, want 404 or 405", r.method, r.target, code)
		}
	}
	k.exact(t, rec, map[string]int64{"hits": 3, "unmatched": 3, "status:4xx": 3, "unmatched status:4xx": 3})
}

// A method outside the standard set, on a route registered for it, counts
// under "OTHER <route>", so that clients cannot add series by inventing
// methods.
func testMethods(t *testing.T, k *kit) {
	rec := k.recorder(t, k.prefix)
	routes := append(basicRoutes(), Route{"PROPFIND", "/dav", statusHandler})
	h := k.serve(t, []*timeseries.Recorder{rec}, routes, nil)
	if code := hit(h, "PROPFIND", "/dav"); code != http.StatusBadRequest {
		t.Fatalf("PROPFIND /dav answered %d, want the route's 400", code)
	}
	dav := k.name("OTHER", "/dav")
	k.exact(t, rec, map[string]int64{"hits": 1, dav: 1, "status:4xx": 1, dav + " status:4xx": 1})
}
