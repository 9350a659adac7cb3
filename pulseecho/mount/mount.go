// Package mount serves the Pulse dashboard in an Echo v4 app. It is apart
// from package pulseecho, the counting, so that an app that only counts
// links no dashboard.
package mount

import (
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/dashboard"
)

// Dashboard serves the dashboard under prefix on e, behind the middleware
// login (the app's login, if any):
//
//	err := mount.Dashboard(e, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec},
//		echomw.BasicAuth(check))
//
// Every request under the prefix, of any method, goes to the dashboard,
// through dashboard.Guard before login: none is counted by a Pulse
// middleware, a refusal of login included, and every answer carries the
// dashboard's security headers. The prefix is a literal path below the
// root (see dashboard.Mount); without its trailing slash it redirects to
// the page.
func Dashboard(e *echo.Echo, prefix string, cfg dashboard.Config, login ...echo.MiddlewareFunc) error {
	m, err := dashboard.Mount(prefix, cfg)
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	serve := echo.WrapHandler(m.Handler)
	chain := append([]echo.MiddlewareFunc{guard}, login...)
	for _, p := range []string{m.Prefix, m.Prefix + "/*"} {
		e.Any(p, serve, chain...)
		// Methods Any does not list would get Echo's 405 past the
		// guard; as not-found routes they go through it too.
		e.RouteNotFound(p, serve, chain...)
	}
	return nil
}

// guard is the first middleware of a mounted dashboard.
func guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		dashboard.Guard(c.Response())
		return next(c)
	}
}
