package adapter

import (
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// collidingRoutes returns two templates of equal length, different text
// and separate bytes that fall in the same memo slot: the case where a
// slot must tell its route from another by address, not by slot.
func collidingRoutes(t *testing.T, method int) (string, string) {
	t.Helper()
	seen := map[int]string{}
	for i := range 100000 {
		r := strings.Clone("/r/" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)))
		idx := routeMemoIndex(r, method)
		if other, ok := seen[idx]; ok && other != r {
			return other, r
		}
		seen[idx] = r
	}
	t.Fatal("no two templates share a slot")
	return "", ""
}

// The memo finds a route by its template's address: the router's own
// string is found there after its first request, an equal string at
// another address and a different template sharing its slot are still
// counted under their own names, and every request counts once.
func TestRouteMemo(t *testing.T) {
	srv := redistest.Start(t)
	tr, rec := testTracker(t, srv, timeseries.Config{}, config{Routes: true})
	get := methodIndex("GET")
	first, second := collidingRoutes(t, get)
	requests := []struct {
		route string
		n     int
	}{
		{first, 3},
		{strings.Clone(first), 2}, // equal text, other bytes: found by the map
		{second, 4},               // same slot, other text
		{first, 1},
	}
	for _, r := range requests {
		for range r.n {
			tr.record(request{Method: "GET", Route: r.route, Status: 200})
		}
	}
	rs := tr.memo.find(first, get)
	if rs == nil || rs.name != "GET "+first {
		t.Fatalf("the memo does not hold %q after its requests: %+v", first, rs)
	}
	if tr.memo.find(strings.Clone(first), get) != nil {
		t.Error("the memo found an equal string at another address")
	}
	if tr.memo.find(second, get) != nil {
		t.Errorf("%q took the slot of %q", second, first)
	}
	if tr.memo.find(first, methodIndex("POST")) != nil {
		t.Error("the memo found a GET route for POST")
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"GET " + first: 6, "GET " + second: 4, "hits": 10} {
		if got := srv.HashSum("count:86400:" + name); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
}
