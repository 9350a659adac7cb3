package pulsehttp

import (
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

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
	Skipper:       func(*http.Request) bool { return false },
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
	if cfg.Recorder == nil {
		return nil, errors.New("pulsehttp: Recorder is nil")
	}
	if cfg.Skipper == nil {
		cfg.Skipper = DefaultHitsConfig.Skipper
	}
	if cfg.RouteName == nil {
		cfg.RouteName = DefaultHitsConfig.RouteName
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = DefaultHitsConfig.ClientIP
	}
	t, err := adapter.New(adapter.Config{
		Recorder: cfg.Recorder, HitsName: cfg.HitsName, Routes: cfg.Routes,
		UnmatchedName: cfg.UnmatchedName, StatusClasses: cfg.StatusClasses,
		VisitorRoutes: cfg.VisitorRoutes, VisitorSeries: cfg.VisitorSeries,
	})
	if err != nil {
		return nil, fmt.Errorf("pulsehttp: %w", err)
	}
	return func(next http.Handler) http.Handler {
		return &handler{cfg: cfg, track: t, next: next}
	}, nil
}

type handler struct {
	cfg   HitsConfig
	track *adapter.Tracker
	next  http.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Skipper(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	rw := adapter.NewWriter(w)
	finished := false
	start := h.track.Begin()
	// Deferred, so a panicking handler is counted as the 500 it becomes;
	// the panic goes on up untouched.
	defer func() {
		h.record(rw, r, finished, h.track.Elapsed(start))
		rw.Release()
	}()
	h.next.ServeHTTP(rw, r)
	finished = true
}

func (h *handler) record(rw *adapter.Writer, r *http.Request, finished bool, d time.Duration) {
	if rw.Skipped() {
		return
	}
	req := adapter.Request{Method: r.Method, Status: rw.Status(finished), Duration: d}
	if h.cfg.Routes {
		req.Route = h.cfg.RouteName(r)
	}
	if h.cfg.SeriesName != nil {
		req.Series = h.cfg.SeriesName(r)
	}
	switch {
	case !h.track.Visits():
	case h.cfg.VisitorID != nil:
		req.Visitor = timeseries.Visitor{ID: h.cfg.VisitorID(r)}
	default:
		req.Visitor = adapter.ClientVisitor(r, h.cfg.ClientIP)
	}
	h.track.Record(req)
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
