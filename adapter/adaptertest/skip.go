package adaptertest

import (
	"net/http"
	"testing"

	"github.com/pulse-dev/pulse/timeseries"
)

// skipRoutes are basicRoutes and a route whose handler marks its request
// with timeseries.Skip, through the writer it was given.
func skipRoutes() []Route {
	return append(basicRoutes(), Route{http.MethodGet, "/skip", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !timeseries.Skip(w) {
			http.Error(w, "no writer took the mark", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})})
}

// A request its handler marks with timeseries.Skip is not counted, at any
// precision, in any series; the others still are.
func testSkip(t *testing.T, k *kit) {
	rec := k.recorder(t, k.prefix)
	h := k.serve(t, []*timeseries.Recorder{rec}, skipRoutes(), nil)
	for range 3 {
		if code := hit(h, http.MethodGet, "/skip"); code != http.StatusNoContent {
			t.Fatalf("GET /skip answered %d", code)
		}
	}
	hit(h, http.MethodGet, "/status/200")
	st := k.name(http.MethodGet, "/status/{code}")
	k.exact(t, rec, map[string]int64{"hits": 1, st: 1, "status:2xx": 1, st + " status:2xx": 1})
}

// With two counting middlewares around a handler (two Recorders), one
// mark keeps the request out of both: each passes it on to the writers
// below it. A request not marked counts in both.
func testNestedSkip(t *testing.T, k *kit) {
	outer, inner := k.recorder(t, k.prefix+"outer:"), k.recorder(t, k.prefix+"inner:")
	h := k.serve(t, []*timeseries.Recorder{outer, inner}, skipRoutes(), nil)
	hit(h, http.MethodGet, "/skip")
	hit(h, http.MethodGet, "/skip")
	hit(h, http.MethodGet, "/status/200")
	st := k.name(http.MethodGet, "/status/{code}")
	for _, rec := range []*timeseries.Recorder{outer, inner} {
		k.exact(t, rec, map[string]int64{"hits": 1, st: 1, "status:2xx": 1, st + " status:2xx": 1})
	}
}
