package pulsechi_test

import (
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/pulse-dev/pulse/adapter/adaptertest"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsechi"
	"github.com/pulse-dev/pulse/pulsehttp/mount"
)

// The chi adapter passes the conformance table: a chi router counted by
// one middleware per Recorder (the router's Use), the dashboard mounted
// in front of it by pulsehttp/mount.
func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	adaptertest.Run(t, srv.Pool(), adaptertest.Adapter{Name: "chi", Start: adaptertest.HTTP(func(app adaptertest.App) (http.Handler, error) {
		r := chi.NewRouter()
		for _, rec := range app.Recorders {
			cfg := pulsechi.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}
			if h := app.Hooks; h != nil {
				cfg.SeriesName, cfg.VisitorID, cfg.Skipper = h.Request()
			}
			r.Use(pulsechi.HitsWithConfig(cfg))
		}
		for _, rt := range app.Routes {
			r.Method(rt.Method, rt.Path, rt.HTTP())
		}
		var h http.Handler = r
		if d := app.Dashboard; d != nil {
			var login []func(http.Handler) http.Handler
			if d.Login != nil {
				login = append(login, d.Login)
			}
			var err error
			if h, err = mount.Dashboard(r, d.Prefix, dashboard.Config{Store: d.Recorder.Store(), Health: d.Recorder}, login...); err != nil {
				return nil, err
			}
		}
		return h, nil
	})})
}
