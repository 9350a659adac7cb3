package pulseecho_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/adapter/adaptertest"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/pulseecho/mount"
)

// colonParams writes a route's {name} segments as Echo and Gin do, :name.
func colonParams(path string) string {
	return regexp.MustCompile(`\{(\w+)\}`).ReplaceAllString(path, ":$1")
}

// hooked is cfg with the table's config hooks, when it has some.
func hooked(cfg pulseecho.HitsConfig, h *adaptertest.Hooks) pulseecho.HitsConfig {
	if h != nil {
		cfg.SeriesName = func(c echo.Context) string { return h.SeriesName(c.Request().Header.Get) }
		cfg.VisitorID = func(c echo.Context) string { return h.VisitorID(c.Request().Header.Get) }
		cfg.Skipper = func(c echo.Context) bool { return h.Skipper(c.Request().Header.Get) }
	}
	return cfg
}

// handler is rt on Echo: KindError returns its error, every other Kind
// is net/http's.
func handler(rt adaptertest.Route) echo.HandlerFunc {
	if rt.Kind != adaptertest.KindError {
		return echo.WrapHandler(rt.HTTP())
	}
	return func(echo.Context) error {
		if rt.Code != 0 {
			return echo.NewHTTPError(rt.Code, "")
		}
		return rt.Err()
	}
}

// errorsAs is an error handler answering every error with code.
func errorsAs(code int) echo.HTTPErrorHandler {
	return func(_ error, c echo.Context) {
		if !c.Response().Committed {
			_ = c.NoContent(code)
		}
	}
}

// The Echo v4 adapter passes the conformance table.
func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	adaptertest.Run(t, srv.Pool(), adaptertest.Adapter{Name: "echo v4", Template: colonParams, ReturnsErrors: true, Start: adaptertest.HTTP(func(app adaptertest.App) (http.Handler, error) {
		e := echo.New()
		if app.ErrorStatus != 0 {
			e.HTTPErrorHandler = errorsAs(app.ErrorStatus)
		}
		for _, rec := range app.Recorders {
			e.Use(pulseecho.HitsWithConfig(hooked(pulseecho.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true, HandleError: app.HandleError}, app.Hooks)))
		}
		for _, r := range app.Routes {
			e.Add(r.Method, colonParams(r.Path), handler(r))
		}
		if d := app.Dashboard; d != nil {
			var login []echo.MiddlewareFunc
			if d.Login != nil {
				login = append(login, echo.WrapMiddleware(d.Login))
			}
			if err := mount.Dashboard(e, d.Prefix, dashboard.Config{Store: d.Recorder.Store(), Health: d.Recorder}, login...); err != nil {
				return nil, err
			}
		}
		return e, nil
	})})
}
