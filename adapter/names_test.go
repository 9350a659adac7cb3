package adapter

import "testing"

func TestStatusClassName(t *testing.T) {
	for status, want := range map[int]string{99: "status:other", 100: "status:1xx", 204: "status:2xx", 404: "status:4xx", 599: "status:5xx", 600: "status:other", 0: "status:other"} {
		if got := StatusClassName(status); got != want {
			t.Errorf("StatusClassName(%d) = %q, want %q", status, got, want)
		}
	}
}

// Only the standard methods, as written, name a route series; the rest
// share OTHER, whatever a client invents.
func TestRouteSeries(t *testing.T) {
	tests := []struct{ method, want string }{
		{"GET", "GET /posts/:id"}, {"HEAD", "HEAD /posts/:id"}, {"POST", "POST /posts/:id"},
		{"PUT", "PUT /posts/:id"}, {"PATCH", "PATCH /posts/:id"}, {"DELETE", "DELETE /posts/:id"},
		{"CONNECT", "CONNECT /posts/:id"}, {"OPTIONS", "OPTIONS /posts/:id"}, {"TRACE", "TRACE /posts/:id"},
		{"get", "OTHER /posts/:id"}, {"PROPFIND", "OTHER /posts/:id"}, {"", "OTHER /posts/:id"},
		{"GET /x", "OTHER /posts/:id"},
	}
	for _, tt := range tests {
		if got := RouteSeries(tt.method, "/posts/:id"); got != tt.want {
			t.Errorf("RouteSeries(%q) = %q, want %q", tt.method, got, tt.want)
		}
	}
}
