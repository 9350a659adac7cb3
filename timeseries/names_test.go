package timeseries

import "testing"

func TestParseRouteName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want RouteName
		ok   bool
	}{
		{"GET /posts/:id", RouteName{Method: "GET", Route: "/posts/:id"}, true},
		{"GET /posts/:id status:5xx", RouteName{Method: "GET", Route: "/posts/:id", Class: "5xx"}, true},
		{"DELETE / status:other", RouteName{Method: "DELETE", Route: "/", Class: "other"}, true},
		{"GET /a status:b status:2xx", RouteName{Method: "GET", Route: "/a status:b", Class: "2xx"}, true},
		{"unmatched status:4xx", RouteName{Route: "unmatched", Class: "4xx"}, true},
		{"hits", RouteName{}, false},
		{"unmatched", RouteName{}, false},
		{"status:2xx", RouteName{}, false},
		{"signups", RouteName{}, false},
		{"get /lower", RouteName{}, false},
		{"GET posts", RouteName{}, false},
		{" /x", RouteName{}, false},
	} {
		got, ok := ParseRouteName(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRouteName(%q) = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// RouteRequests counts each request once: a route with classes by its
// classes, one without whole, the app's and app-named series not at all.
func TestRouteRequests(t *testing.T) {
	got := RouteRequests([]SeriesTotal{
		{"hits", 10}, {"status:2xx", 7}, {"signups", 2},
		{"GET /posts/:id", 6}, {"GET /posts/:id status:2xx", 5}, {"GET /posts/:id status:5xx", 1},
		{"unmatched", 3}, {"unmatched status:4xx", 3}, {"POST /login", 1},
	})
	want := []RouteHits{
		{RouteName{"GET", "/posts/:id", "2xx"}, 5}, {RouteName{"GET", "/posts/:id", "5xx"}, 1},
		{RouteName{"", "unmatched", "4xx"}, 3}, {RouteName{"POST", "/login", ""}, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
