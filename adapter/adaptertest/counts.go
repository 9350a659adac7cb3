package adaptertest

import (
	"net/http"
	"testing"

	"github.com/pulse-dev/pulse/timeseries"
)

// basicRoutes are the routes most rows serve.
func basicRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/status/{code}", Kind: KindStatus},
		{Method: http.MethodPost, Path: "/items", Kind: KindStatus, Code: http.StatusCreated},
	}
}

// Every request counts once, at each of the six precisions, in hits, its
// route, its status class and its route's class; a route's own 404 stays
// under the route; a status outside 100 to 599 is "status:other".
func testCounts(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, basicRoutes())
	sent := map[string]int{"/status/200": 3, "/status/204": 1, "/status/302": 2, "/status/404": 2, "/status/503": 1, "/status/600": 1}
	for target, n := range sent {
		for range n {
			s.hit(t, http.MethodGet, target)
		}
	}
	for range 2 {
		if code := s.hit(t, http.MethodPost, "/items"); code != http.StatusCreated {
			t.Fatalf("POST /items answered %d", code)
		}
	}
	s.wait()
	st := k.name(http.MethodGet, "/status/{code}")
	items := k.name(http.MethodPost, "/items")
	k.exact(t, rec, map[string]int64{
		"hits": 12, st: 10, items: 2,
		"status:2xx": 6, "status:3xx": 2, "status:4xx": 2, "status:5xx": 1, "status:other": 1,
		st + " status:2xx": 4, st + " status:3xx": 2, st + " status:4xx": 2, st + " status:5xx": 1,
		st + " status:other": 1, items + " status:2xx": 2,
	})
}

// A request no route matched, the router's own 404, counts under
// "unmatched", never under a name from the path.
func testUnmatched(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, basicRoutes())
	for _, target := range []string{"/nowhere", "/nowhere/7", "/status", "/items/7"} {
		if code := s.hit(t, http.MethodGet, target); code != http.StatusNotFound {
			t.Errorf("GET %s answered %d, want 404", target, code)
		}
	}
	s.wait()
	k.exact(t, rec, map[string]int64{"hits": 4, "unmatched": 4, "status:4xx": 4, "unmatched status:4xx": 4})
}

// A request whose method the matched path's route does not take, which
// the router refuses with 405 (or 404 when it does not tell), counts
// under "unmatched" as the class it was answered, never under the route.
func testRefused(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, basicRoutes())
	refused := []struct{ method, target string }{
		{http.MethodDelete, "/items"}, {http.MethodPut, "/items"}, {http.MethodGet, "/items"},
		{http.MethodPost, "/status/200"}, {http.MethodPatch, "/status/200"},
	}
	for _, r := range refused {
		if code := s.hit(t, r.method, r.target); code != http.StatusMethodNotAllowed && code != http.StatusNotFound {
			t.Errorf("%s %s answered %d, want 405 or 404", r.method, r.target, code)
		}
	}
	s.wait()
	n := int64(len(refused))
	k.exact(t, rec, map[string]int64{"hits": n, "unmatched": n, "status:4xx": n, "unmatched status:4xx": n})
}

// A method outside the standard set, on a route registered for it, counts
// under "OTHER <route>", so that clients cannot add series by inventing
// methods.
func testMethods(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	routes := append(basicRoutes(), Route{Method: "PROPFIND", Path: "/dav", Kind: KindStatus})
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, routes)
	if code := s.hit(t, "PROPFIND", "/dav"); code != http.StatusBadRequest {
		t.Fatalf("PROPFIND /dav answered %d, want the route's 400", code)
	}
	s.wait()
	dav := k.name("OTHER", "/dav")
	k.exact(t, rec, map[string]int64{"hits": 1, dav: 1, "status:4xx": 1, dav + " status:4xx": 1})
}
