package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/timeseries"
)

// Mount serves the Pulse dashboard under prefix on e, behind the
// middleware m (a login, say):
//
//	import (
//		echomw "github.com/labstack/echo/v4/middleware"
//		pulsemw "github.com/pulse-dev/pulse/middleware"
//	)
//
//	err := pulsemw.Mount(e, "/dashboard", dashboard.Config{
//		Store:  rec.Store(),
//		Health: rec,
//	}, echomw.BasicAuth(check))
//
// The dashboard's guard runs first, before m: every request under the
// prefix is marked with timeseries.Skip, so it is not counted by Hits
// even when m refuses it, and every answer, a 401 of m included, carries
// the dashboard's security headers. The prefix without its trailing slash
// redirects to the page. The prefix is not "/": an app that serves
// nothing but the dashboard serves dashboard.Handler itself. Requests of any method reach the guard; the
// dashboard itself answers only GET and HEAD.
func Mount(e *echo.Echo, prefix string, cfg dashboard.Config, m ...echo.MiddlewareFunc) error {
	if !strings.HasPrefix(prefix, "/") {
		return fmt.Errorf("middleware: dashboard prefix %q does not start with /", prefix)
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix == "" {
		return errors.New("middleware: the dashboard needs a prefix of its own, not the root")
	}
	h, err := dashboard.Handler(cfg)
	if err != nil {
		return fmt.Errorf("middleware: %w", err)
	}
	// StripPrefix trims the raw (escaped) path too, so a series name
	// with %2F in it reaches the dashboard as one path segment.
	serve := echo.WrapHandler(http.StripPrefix(prefix, h))
	mw := append([]echo.MiddlewareFunc{dashboardGuard}, m...)
	for _, p := range []string{prefix, prefix + "/*"} {
		e.Any(p, serve, mw...)
		// Methods Any does not list would get Echo's 405 past the
		// guard; as not-found routes they go through it too.
		e.RouteNotFound(p, serve, mw...)
	}
	return nil
}

// dashboardGuard is the first middleware of a mounted dashboard: it marks
// the request as not counted and sets the security headers before any
// other middleware can answer.
func dashboardGuard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		timeseries.Skip(c.Response())
		dashboard.SecurityHeaders(c.Response().Header())
		return next(c)
	}
}
