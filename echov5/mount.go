package echov5

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/timeseries"
)

// Mount serves the dashboard under prefix on e, behind the middleware mw
// (a login, say):
//
//	echov5.Mount(e, "/dashboard", cfg, echomw.BasicAuth(check))
//
// A guard runs first, before mw: every request under the prefix is marked
// with timeseries.Skip, so Hits does not count it even when mw refuses
// it, and every answer, a 401 of mw included, carries the dashboard's
// security headers. The dashboard answers every method itself (read-only: 405 for
// all but GET and HEAD) and its own 404 below the prefix.
func Mount(e *echo.Echo, prefix string, cfg dashboard.Config, mw ...echo.MiddlewareFunc) error {
	p := strings.TrimRight(prefix, "/")
	if p == "" || p[0] != '/' || strings.ContainsAny(p, ":*") {
		return fmt.Errorf("echov5: mount: prefix %q is not a literal path below the root, like /dashboard", prefix)
	}
	h, err := dashboard.Handler(cfg)
	if err != nil {
		return fmt.Errorf("echov5: mount: %w", err)
	}
	// StripPrefix strips the escaped path too, so names holding %2F reach
	// the dashboard intact; the bare prefix reaches it as "", which the
	// dashboard redirects to its root with a slash.
	strip := http.StripPrefix(p, h)
	serve := func(c *echo.Context) error {
		strip.ServeHTTP(c.Response(), c.Request())
		return nil
	}
	chain := append([]echo.MiddlewareFunc{guard}, mw...)
	for _, path := range []string{p, p + "/*"} {
		route := echo.Route{Method: echo.RouteAny, Path: path, Handler: serve, Middlewares: chain}
		if _, err := e.AddRoute(route); err != nil {
			return fmt.Errorf("echov5: mount: %w", err)
		}
	}
	return nil
}

// guard runs before the app's middleware of a mounted dashboard, so that
// a request it refuses is neither counted nor without the headers.
func guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		timeseries.Skip(c.Response())
		dashboard.SecurityHeaders(c.Response().Header())
		return next(c)
	}
}
