package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// send sends method to url with a body that is not JSON, with the login
// when user is set, and returns the status.
func send(t *testing.T, method, url, user, pass string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestDashboardRefusalsNotCounted: writes with a body that is not JSON to
// the dashboard and the metrics are answered by their login (401) when
// DASHBOARD_USER is set, before the forum's check of the body (415), and
// by the dashboard's read-only 405 past it; none of them, nor a refused
// read, nor an admin call, is counted. One request to the forum is, so that the count is
// known to work.
func TestDashboardRefusalsNotCounted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, user, pass string
		login            bool // send the right login
		write, read      int  // the status of a write, of a GET of the page
	}{
		{"no login configured", "", "", false, http.StatusMethodNotAllowed, http.StatusOK},
		{"login refuses", "ops", "s3cret", false, http.StatusUnauthorized, http.StatusUnauthorized},
		{"login accepts", "ops", "s3cret", true, http.StatusMethodNotAllowed, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.Start(t)
			base, stop := startExample(t, srv, options{DashboardUser: tt.user, DashboardPass: tt.pass})
			user, pass := "", ""
			if tt.login {
				user, pass = tt.user, tt.pass
			}
			for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, "PURGE"} {
				for _, path := range []string{"/dashboard/api/health", "/dashboard", "/metrics"} {
					if got := send(t, m, base+path, user, pass); got != tt.write {
						t.Errorf("%s %s = %d, want %d", m, path, got, tt.write)
					}
				}
			}
			if got := get(t, base+"/dashboard/", user, pass); got != tt.read {
				t.Errorf("GET /dashboard/ = %d, want %d", got, tt.read)
			}
			// Admin calls, refused or not, are not counted either.
			send(t, http.MethodPost, base+"/api/admin/reconcile", user, pass)
			if got := get(t, base+"/", "", ""); got != http.StatusOK {
				t.Fatalf("GET / = %d", got)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]int64{"count:86400:hits": 1, "count:86400:status:4xx": 0, "count:86400:unmatched": 0, "count:86400:status:3xx": 0} {
				if got := srv.HashSum(key); got != want {
					t.Errorf("%s = %d, want %d: a dashboard or metrics request was counted", key, got, want)
				}
			}
		})
	}
}
