package pulsehttp

import (
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig configures the middleware. Nil and zero fields take the
// values of DefaultHitsConfig.
type HitsConfig struct {
	// Skipper decides, before the handler runs, that a request is not
	// counted. Requests marked with Skip are not counted either.
	Skipper func(r *http.Request) bool

	// Recorder counts the hits; required.
	Recorder *timeseries.Recorder

	// HitsName is the series of every counted request (default "hits").
	HitsName string

	// Routes adds a series per route, "<METHOD> <path pattern>" such as
	// "GET /posts/{id}", never the raw URL, so the names are bounded by
	// the app's routes. Requests that match no route fold into
	// UnmatchedName; methods outside the standard set are named "OTHER".
	Routes bool
	// RouteName returns the path template of the route that served r,
	// read after the handler returns; "" means no route matched. By
	// default it is r.Pattern, which http.ServeMux sets, without the
	// method and host the pattern may start with. For chi, mount the
	// middleware with the router's Use and read its pattern:
	//
	//	RouteName: func(r *http.Request) string {
	//		if rc := chi.RouteContext(r.Context()); rc != nil {
	//			return rc.RoutePattern()
	//		}
	//		return ""
	//	},
	RouteName func(r *http.Request) string
	// UnmatchedName is the route series of requests that match no route
	// (default "unmatched").
	UnmatchedName string

	// StatusClasses adds the series status:1xx … status:5xx (status:other
	// for anything else).
	StatusClasses bool

	// SeriesName names one more series for a request, e.g. per tenant;
	// "" means none. Names are checked once and share the Recorder's cap
	// on distinct names, so a client cannot create keys without bound.
	SeriesName func(r *http.Request) string

	// ClientIP returns the client's address, for apps behind proxies they
	// trust (read the header those proxies set, and only when the
	// connection comes from one of them). Nil means the connection's
	// remote address, so a forged X-Forwarded-For mints no visitor.
	ClientIP func(r *http.Request) string
	// VisitorID returns the id of the request's visitor, hashed under
	// the day's salt like an address; "" counts no visitor (bots, health
	// checks). Nil means the client's address (ClientIP) and User-Agent.
	// Neither is called when the Recorder counts no visitors.
	VisitorID func(r *http.Request) string
	// VisitorRoutes counts unique visitors per route too, VisitorSeries
	// per SeriesName series; the hits series always counts them, unless
	// the Recorder has DisableVisitors.
	VisitorRoutes bool
	VisitorSeries bool
}

// DefaultHitsConfig is the default configuration.
var DefaultHitsConfig = HitsConfig{
	ClientIP:      adapter.RemoteAddr,
	HitsName:      adapter.DefaultHitsName,
	RouteName:     PatternPath,
	UnmatchedName: adapter.DefaultUnmatchedName,
}

// Hits returns a middleware that counts every request in the series
// "hits" of rec. It panics if rec is nil.
func Hits(rec *timeseries.Recorder) func(http.Handler) http.Handler {
	c := DefaultHitsConfig
	c.Recorder = rec
	return HitsWithConfig(c)
}

// HitsWithConfig returns the middleware configured by cfg. It panics on
// an invalid config; use ToMiddleware to get the error instead.
func HitsWithConfig(cfg HitsConfig) func(http.Handler) http.Handler {
	return adapter.Must(cfg.ToMiddleware())
}

// ToMiddleware validates the config, creates the fixed series, and
// returns the middleware.
func (cfg HitsConfig) ToMiddleware() (func(http.Handler) http.Handler, error) {
	routeName := cfg.RouteName
	if routeName == nil {
		routeName = DefaultHitsConfig.RouteName
	}
	m, err := adapter.HitsConfig[*http.Request]{Skipper: cfg.Skipper, Recorder: cfg.Recorder,
		HitsName: cfg.HitsName, Routes: cfg.Routes, UnmatchedName: cfg.UnmatchedName,
		StatusClasses: cfg.StatusClasses, SeriesName: cfg.SeriesName, ClientIP: cfg.ClientIP,
		VisitorID: cfg.VisitorID, VisitorRoutes: cfg.VisitorRoutes, VisitorSeries: cfg.VisitorSeries,
	}.Meter(adapter.HTTP(request, nil))
	if err != nil {
		return nil, fmt.Errorf("pulsehttp: %w", err)
	}
	if !cfg.Routes {
		routeName = nil
	}
	return func(next http.Handler) http.Handler {
		return &handler{meter: m, routeName: routeName, next: next}
	}, nil
}

// request is the context of a net/http adapter: the request itself.
func request(r *http.Request) *http.Request { return r }

type handler struct {
	meter     *adapter.Meter[*http.Request]
	routeName func(*http.Request) string // nil without Routes
	next      http.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.meter.Skip(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	rw := adapter.NewWriter(w)
	finished := false
	start := h.meter.Begin()
	// Deferred, so a panicking handler is counted as the 500 it becomes;
	// the panic goes on up untouched.
	defer func() {
		if !rw.Skipped() {
			route := ""
			if h.routeName != nil {
				route = h.routeName(r)
			}
			h.meter.Count(r, r.Method, route, rw.Status(finished), h.meter.Elapsed(start))
		}
		rw.Release()
	}()
	h.next.ServeHTTP(rw, r)
	finished = true
}

// PatternPath returns the path part of r.Pattern, the ServeMux pattern
// that matched r: "GET /posts/{id}" gives "/posts/{id}", and a pattern
// with a host keeps it ("example.com/docs/"). It is "" when no pattern
// matched, or when a handler between the middleware and the ServeMux
// passed a copy of r (r.WithContext, http.StripPrefix) on, since ServeMux
// sets the pattern on the request it is given.
func PatternPath(r *http.Request) string {
	if r.Method == http.MethodConnect && connectRedirect(r) {
		return ""
	}
	// ServeMux separates the method from the path with spaces or tabs.
	// A loop rather than strings.IndexAny and TrimLeft, which build their
	// character set on every request.
	p := r.Pattern
	for i := 0; i < len(p); i++ {
		if p[i] == ' ' || p[i] == '\t' {
			p = p[i+1:]
			for len(p) > 0 && (p[0] == ' ' || p[0] == '\t') {
				p = p[1:]
			}
			break
		}
	}
	return p
}

// connectRedirect reports whether ServeMux answered r, a CONNECT
// request, with its trailing-slash redirect, for which it sets r.Pattern
// to the path redirected to, not to a pattern: named after it, each path
// a client sends would be a series. Only a path without a trailing slash is
// redirected, and no pattern that matches such a path is the path plus
// a slash.
func connectRedirect(r *http.Request) bool {
	if r.Pattern == "" || r.URL == nil {
		return false
	}
	p := r.URL.Path
	if strings.HasSuffix(p, "/") {
		return false
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return r.Pattern == path.Clean(p)+"/"
}
