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
