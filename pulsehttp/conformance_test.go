package pulsehttp_test

import (
	"net/http"
	"testing"

	"github.com/pulse-dev/pulse/adapter/adaptertest"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/pulsehttp/mount"
)

// The net/http adapter passes the conformance table: a ServeMux, the
// dashboard mounted in front of it, counted by one middleware per
// Recorder around both.
func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	adaptertest.Run(t, srv.Pool(), adaptertest.Adapter{Name: "net/http", Start: adaptertest.HTTP(func(app adaptertest.App) (http.Handler, error) {
		mux := http.NewServeMux()
		for _, r := range app.Routes {
			mux.Handle(r.Method+" "+r.Path, r.HTTP())
		}
		var h http.Handler = mux
		if d := app.Dashboard; d != nil {
			var login []func(http.Handler) http.Handler
			if d.Login != nil {
				login = append(login, d.Login)
			}
			var err error
			if h, err = mount.Dashboard(mux, d.Prefix, dashboard.Config{Store: d.Recorder.Store(), Health: d.Recorder}, login...); err != nil {
				return nil, err
			}
		}
		for i := len(app.Recorders) - 1; i >= 0; i-- {
			cfg := pulsehttp.HitsConfig{Recorder: app.Recorders[i], Routes: true, StatusClasses: true}
			if hk := app.Hooks; hk != nil {
				cfg.SeriesName, cfg.VisitorID, cfg.Skipper = hk.Request()
			}
			h = pulsehttp.HitsWithConfig(cfg)(h)
		}
		return h, nil
	})})
}
