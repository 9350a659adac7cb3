package middleware_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/adapter/adaptertest"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/middleware"
	"github.com/pulse-dev/pulse/middleware/mount"
)

// colonParams writes a route's {name} segments as Echo and Gin do, :name.
func colonParams(path string) string {
	return regexp.MustCompile(`\{(\w+)\}`).ReplaceAllString(path, ":$1")
}

// The Echo v4 adapter passes the conformance table.
func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	adaptertest.Run(t, srv.Pool(), adaptertest.Adapter{Template: colonParams, Serve: func(app adaptertest.App) (http.Handler, error) {
		e := echo.New()
		for _, rec := range app.Recorders {
			e.Use(middleware.HitsWithConfig(middleware.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
		}
		for _, r := range app.Routes {
			e.Add(r.Method, colonParams(r.Path), echo.WrapHandler(r.Handler))
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
	}})
}
