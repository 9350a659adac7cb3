// Package pulsechi counts the requests of a chi app in Pulse time series.
// It is chi's glue to package pulsehttp, whose middleware it is with the
// route named by chi's route pattern, so it counts, names, times and
// skips exactly as Pulse's other adapters do. Mount it with the router's
// Use, where chi's routing context exists:
//
//	r := chi.NewRouter()
//	r.Use(pulsechi.HitsWithConfig(pulsechi.HitsConfig{
//		Recorder:      rec,
//		Routes:        true, // "GET /posts/{id}", never the raw URL
//		StatusClasses: true, // "status:2xx" …
//	}))
//
// chi's own 404 and 405 are "unmatched". A handler keeps its request out
// of the counts with timeseries.Skip(w). The dashboard is served in
// front of the router by pulsehttp/mount, chi's router being an
// http.Handler.
package pulsechi

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig configures the middleware: the fields of
// pulsehttp.HitsConfig, RouteName defaulting to RouteName. Nil and zero
// fields take the values of DefaultHitsConfig.
type HitsConfig pulsehttp.HitsConfig

// DefaultHitsConfig is the default configuration.
var DefaultHitsConfig = HitsConfig{HitsName: pulsehttp.DefaultHitsConfig.HitsName,
	UnmatchedName: pulsehttp.DefaultHitsConfig.UnmatchedName, RouteName: RouteName}

// Hits returns a middleware that counts every request in the series
// "hits" of rec. It panics if rec is nil.
func Hits(rec *timeseries.Recorder) func(http.Handler) http.Handler {
	return HitsWithConfig(HitsConfig{Recorder: rec})
}

// HitsWithConfig returns the middleware configured by cfg. It panics on
// an invalid config; use ToMiddleware to get the error instead.
func HitsWithConfig(cfg HitsConfig) func(http.Handler) http.Handler {
	return pulsehttp.HitsWithConfig(cfg.http())
}

// ToMiddleware validates cfg, creates the fixed series, and returns the
// middleware.
func (cfg HitsConfig) ToMiddleware() (func(http.Handler) http.Handler, error) {
	return pulsehttp.HitsConfig(cfg.http()).ToMiddleware()
}

func (cfg HitsConfig) http() pulsehttp.HitsConfig {
	if cfg.RouteName == nil {
		cfg.RouteName = RouteName
	}
	return pulsehttp.HitsConfig(cfg)
}

// RouteName is the pattern of the chi route that served r, mounted
// subrouters joined ("/api/users/{id}"); "" when no route matched (chi's
// 404 and 405, a subrouter's included).
func RouteName(r *http.Request) string {
	rc := chi.RouteContext(r.Context())
	if rc == nil {
		return ""
	}
	p := rc.RoutePattern()
	// A subrouter's own 404 or 405 leaves the pattern it is mounted at
	// ("/api/*"), as a catch-all route's would be: only the router's
	// match tells them apart.
	if strings.HasSuffix(p, "/*") && rc.Routes != nil && !rc.Routes.Match(chi.NewRouteContext(), r.Method, routePath(r)) {
		return ""
	}
	return p
}

// routePath is the path chi routes r by.
func routePath(r *http.Request) string {
	if r.URL.RawPath != "" {
		return r.URL.RawPath
	}
	return r.URL.Path
}
