package pulsegin_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/pulse-dev/pulse/adapter/adaptertest"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsegin"
	"github.com/pulse-dev/pulse/pulsegin/mount"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode)
	redistest.Main(m)
}

// colonParams writes a route's {name} segments as Gin does, :name.
func colonParams(path string) string {
	return regexp.MustCompile(`\{(\w+)\}`).ReplaceAllString(path, ":$1")
}

// ginLogin is net/http middleware as a Gin handler: the chain goes on
// only when mw calls the handler it wraps.
func ginLogin(mw func(http.Handler) http.Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		passed := false
		mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed = true })).ServeHTTP(c.Writer, c.Request)
		if !passed {
			c.Abort()
		}
	}
}

// hooked is cfg with the table's config hooks, when it has some.
func hooked(cfg pulsegin.HitsConfig, h *adaptertest.Hooks) pulsegin.HitsConfig {
	if h != nil {
		cfg.SeriesName = func(c *gin.Context) string { return h.SeriesName(c.GetHeader) }
		cfg.VisitorID = func(c *gin.Context) string { return h.VisitorID(c.GetHeader) }
		cfg.Skipper = func(c *gin.Context) bool { return h.Skipper(c.GetHeader) }
	}
	return cfg
}

// serve is the conformance table's app on Gin.
func serve(app adaptertest.App) (http.Handler, error) {
	r := gin.New()
	for _, rec := range app.Recorders {
		r.Use(pulsegin.HitsWithConfig(hooked(pulsegin.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}, app.Hooks)))
	}
	for _, rt := range app.Routes {
		r.Handle(rt.Method, colonParams(rt.Path), gin.WrapH(rt.HTTP()))
	}
	if d := app.Dashboard; d != nil {
		var login []gin.HandlerFunc
		if d.Login != nil {
			login = append(login, ginLogin(d.Login))
		}
		if err := mount.Dashboard(r, d.Prefix, dashboard.Config{Store: d.Recorder.Store(), Health: d.Recorder}, login...); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// The Gin adapter passes the conformance table.
func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	adaptertest.Run(t, srv.Pool(), adaptertest.Adapter{Name: "gin", Template: colonParams, Start: adaptertest.HTTP(serve)})
}
