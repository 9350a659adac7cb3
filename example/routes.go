package main

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/example/forum"
	"github.com/pulse-dev/pulse/promexport"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/pulseecho/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

// newEcho routes the forum, the dashboard and the Prometheus metrics,
// every request counted by rec. alerts, when set, is the alert
// evaluator's handler, which the dashboard serves and shows. auth, when
// set, guards the dashboard and the metrics as well as the forum's admin
// routes. proxies are the trusted proxies' ranges, none by default.
func newEcho(rec *timeseries.Recorder, app *forum.App, alerts http.Handler, auth echo.MiddlewareFunc, user string, proxies []*net.IPNet, logger *slog.Logger) (*echo.Echo, error) {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = forum.ErrorHandler
	// Hits reads the client's address for unique visitors: the
	// connection's, or with TRUSTED_PROXIES the one those proxies name.
	e.IPExtractor = ipExtractor(proxies)
	// Hits goes first so that Recover sits inside it and a panic is
	// counted as the 500 it becomes; the forum's guards come after both,
	// so a refused request is counted too.
	e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{
		Recorder:      rec,
		Routes:        true,
		StatusClasses: true,
		VisitorRoutes: true, // visitors per route, besides the site's
	}))
	e.Use(echomw.Recover())
	app.Register(e, ownGuard)

	login := loginChain(auth, user, logger)
	if err := mount.Dashboard(e, dashboardPrefix, dashboard.Config{
		Store:    rec.Store(),
		Health:   rec,
		Entities: app.Counters(),
		Labels:   app.Labels,
		Alerts:   alerts,
		Title:    "Pulse forum",
		Logger:   logger,
	}, login...); err != nil {
		return nil, err
	}
	return e, mountMetrics(e, rec, login)
}

// loginChain is the middleware in front of the dashboard and the metrics:
// auth, or none, which the log warns about.
func loginChain(auth echo.MiddlewareFunc, user string, logger *slog.Logger) []echo.MiddlewareFunc {
	if auth == nil {
		logger.Warn("dashboard and /metrics are open to anyone who can reach them and admin routes are off; set DASHBOARD_USER and DASHBOARD_PASSWORD to require a login and turn them on")
		return nil
	}
	logger.Info("dashboard, /metrics and admin routes require BasicAuth", "user", user)
	return []echo.MiddlewareFunc{auth}
}

// mountMetrics serves rec's Prometheus metrics at /metrics behind login.
func mountMetrics(e *echo.Echo, rec *timeseries.Recorder, login []echo.MiddlewareFunc) error {
	reg := prometheus.NewRegistry()
	if err := reg.Register(promexport.NewCollector(rec)); err != nil {
		return fmt.Errorf("example: metrics: %w", err)
	}
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	serve := func(c echo.Context) error {
		if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
			c.Response().Header().Set("Allow", "GET, HEAD")
			return echo.NewHTTPError(http.StatusMethodNotAllowed, "metrics are read with GET")
		}
		metrics.ServeHTTP(c.Response(), c.Request())
		return nil
	}
	// Scrapes are not traffic: every request, of any method, is marked
	// before the login runs, like the dashboard's requests.
	chain := append([]echo.MiddlewareFunc{guard}, login...)
	e.Any(metricsPath, serve, chain...)
	e.RouteNotFound(metricsPath, serve, chain...)
	return nil
}

// Where the dashboard and the Prometheus metrics are served.
const (
	dashboardPrefix = "/dashboard"
	metricsPath     = "/metrics"
)

// guard marks a request as not counted by Hits, with the dashboard's
// security headers, before anything else of its route answers.
func guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		dashboard.Guard(c.Response())
		return next(c)
	}
}

// ownGuard names the routes with a login of their own, the dashboard's
// and the metrics', which the forum's guards leave alone: their login
// answers first, before any check of the body, so that a request it
// refuses, or a malformed one, is answered there and never counted.
func ownGuard(c echo.Context) bool {
	p := c.Path()
	return p == metricsPath || p == dashboardPrefix || strings.HasPrefix(p, dashboardPrefix+"/")
}

// dashboardAuth is the BasicAuth of DASHBOARD_USER and DASHBOARD_PASSWORD,
// or nil when neither is set.
func dashboardAuth(opts options) echo.MiddlewareFunc {
	if opts.DashboardUser == "" && opts.DashboardPass == "" {
		return nil
	}
	return basicAuth(opts.DashboardUser, opts.DashboardPass)
}

// basicAuth checks the dashboard login in constant time.
func basicAuth(user, pass string) echo.MiddlewareFunc {
	return echomw.BasicAuthWithConfig(echomw.BasicAuthConfig{
		Realm: "Pulse dashboard",
		Validator: func(u, p string, c echo.Context) (bool, error) {
			okUser := subtle.ConstantTimeCompare([]byte(u), []byte(user)) == 1
			okPass := subtle.ConstantTimeCompare([]byte(p), []byte(pass)) == 1
			return okUser && okPass, nil
		},
	})
}
