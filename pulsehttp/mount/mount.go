// Package mount serves the Pulse dashboard in a net/http app, or in front
// of any router that is an http.Handler (chi's included). It is apart
// from package pulsehttp, the counting, so that an app that only counts
// links no dashboard.
package mount

import (
	"fmt"
	"net/http"

	"github.com/pulse-dev/pulse/dashboard"
)

// Dashboard returns next with the dashboard served under prefix, behind
// the middleware login (the app's login, if any; the first given runs
// first):
//
//	h, err := mount.Dashboard(mux, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}, login)
//	srv := &http.Server{Handler: pulsehttp.HitsWithConfig(cfg)(h)}
//
// Every request under the prefix, of any method, goes to the dashboard,
// through dashboard.Guard before login: none is counted by a Pulse
// middleware, a refusal of login included, and every answer carries the
// dashboard's security headers. Other requests go to next. The dashboard
// is served in front of next, so that a path with dot segments or "//"
// under the prefix is the dashboard's to redirect, under the prefix,
// rather than http.ServeMux's, whose redirect leaves the prefix and
// would be counted. The prefix is a literal path below the root (see
// dashboard.Mount); without its trailing slash it redirects to the page.
func Dashboard(next http.Handler, prefix string, cfg dashboard.Config, login ...func(http.Handler) http.Handler) (http.Handler, error) {
	m, err := dashboard.Mount(prefix, cfg)
	if err != nil {
		return nil, fmt.Errorf("mount: %w", err)
	}
	dash := m.Handler
	for i := len(login) - 1; i >= 0; i-- {
		dash = login[i](dash)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !m.Under(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		dashboard.Guard(w)
		dash.ServeHTTP(w, r)
	}), nil
}
