package promexport

import "testing"

func TestRequestOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		want request
		ok   bool
	}{
		{"GET /posts/:id", request{method: "GET", route: "/posts/:id"}, true},
		{"GET /posts/:id status:5xx", request{method: "GET", route: "/posts/:id", code: "5xx"}, true},
		{"DELETE / status:other", request{method: "DELETE", route: "/", code: "other"}, true},
		{"GET /a status:b status:2xx", request{method: "GET", route: "/a status:b", code: "2xx"}, true},
		{"unmatched status:4xx", request{route: "unmatched", code: "4xx"}, true},
		{"hits", request{}, false},
		{"unmatched", request{}, false},
		{"status:2xx", request{}, false},
		{"signups", request{}, false},
		{"get /lower", request{}, false},
		{"GET posts", request{}, false},
		{" /x", request{}, false},
	} {
		got, ok := requestOf(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("requestOf(%q) = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
