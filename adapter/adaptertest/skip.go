package adaptertest

import (
	"net/http"
	"testing"

	"github.com/pulse-dev/pulse/timeseries"
)

// skipRoutes are basicRoutes and a route whose handler marks its request
// with the framework's skip mark.
func skipRoutes() []Route {
	return append(basicRoutes(), Route{Method: http.MethodGet, Path: "/skip", Kind: KindSkip})
}

// A request its handler marks with the skip mark is not counted, at any
// precision, in any series; the others still are.
func testSkip(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, skipRoutes())
	for range 3 {
		if code := s.hit(t, http.MethodGet, "/skip"); code != http.StatusNoContent {
			t.Fatalf("GET /skip answered %d", code)
		}
	}
	s.hit(t, http.MethodGet, "/status/200")
	s.wait()
	st := k.name(http.MethodGet, "/status/{code}")
	k.exact(t, rec, map[string]int64{"hits": 1, st: 1, "status:2xx": 1, st + " status:2xx": 1})
}

// With two counting middlewares around a handler (two Recorders), one
// mark keeps the request out of both: each passes it on to the writers
// below it. A request not marked counts in both.
func testNestedSkip(t testing.TB, k *kit) {
	outer, inner := k.recorder(t, k.prefix+"outer:"), k.recorder(t, k.prefix+"inner:")
	s := k.serveRoutes(t, []*timeseries.Recorder{outer, inner}, skipRoutes())
	s.hit(t, http.MethodGet, "/skip")
	s.hit(t, http.MethodGet, "/skip")
	s.hit(t, http.MethodGet, "/status/200")
	s.wait()
	st := k.name(http.MethodGet, "/status/{code}")
	for _, rec := range []*timeseries.Recorder{outer, inner} {
		k.exact(t, rec, map[string]int64{"hits": 1, st: 1, "status:2xx": 1, st + " status:2xx": 1})
	}
}
