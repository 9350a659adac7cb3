package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

// Dot segments under a prefix, net/http: behind http.StripPrefix alone
// the dashboard's own redirect keeps the prefix (as in the Echo mounts);
// behind a ServeMux, the mux cleans the path first.
func TestDotSegments(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true})
	h, err := dashboard.Handler(dashboard.Config{Store: f.Store, Health: f.Rec})
	if err != nil {
		t.Fatal(err)
	}
	strip := http.StripPrefix("/dashboard", h)
	mux := http.NewServeMux()
	mux.Handle("/dashboard/", strip)
	mux.Handle("/dashboard", strip)
	tests := []struct {
		name    string
		handler http.Handler
		mux     bool
	}{
		{"StripPrefix", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/dashboard") {
				http.NotFound(w, r)
				return
			}
			strip.ServeHTTP(w, r)
		}), false},
		{"ServeMux", mux, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			dashtest.CheckDotSegments(t, srv.Listener.Addr().String(), tt.mux)
		})
	}
}
