package adapter

import (
	"net/http"
	"sync"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig is the configuration of an adapter whose handlers take a
// context of type C (*gin.Context): the fields every Pulse adapter's
// HitsConfig has, its hooks included, so that an adapter declares its
// own as a type of it (type HitsConfig adapter.HitsConfig[*gin.Context])
// and has them documented here. Nil and zero fields take the defaults.
type HitsConfig[C any] struct {
	// Skipper decides, before the handler runs, that a request is not
	// counted (default: none is); timeseries.Skip decides the same from
	// inside.
	Skipper func(c C) bool
	// Recorder counts the requests; required.
	Recorder *timeseries.Recorder
	// HitsName is the series of every counted request (DefaultHitsName).
	HitsName string
	// Routes adds a series per route, "<METHOD> <route template>" (see
	// RouteSeries); the requests no route matched count in UnmatchedName
	// (DefaultUnmatchedName).
	Routes        bool
	UnmatchedName string
	// StatusClasses adds the series of StatusClassName, and with Routes
	// one per route and class: "GET /posts/:id status:5xx".
	StatusClasses bool
	// SeriesName names one more series for a request, a tenant's say; ""
	// means none. Names share the Recorder's cap on distinct names.
	SeriesName func(c C) string
	// ClientIP is the visitor's address, for an app behind proxies it
	// trusts; nil means the connection's (RemoteAddr), so that a forged
	// X-Forwarded-For mints no visitor.
	ClientIP func(c C) string
	// VisitorID names the request's visitor, hashed under the day's salt
	// like an address; "" counts no visitor (bots, probes). Nil means
	// ClientIP and the User-Agent. Neither is called when the Recorder
	// counts no visitors.
	VisitorID func(c C) string
	// VisitorRoutes and VisitorSeries count unique visitors per route and
	// per SeriesName series too; the hits series always counts them.
	VisitorRoutes bool
	VisitorSeries bool
	// HandleError, for a framework whose handlers return an error (Echo,
	// Fiber), calls the app's error handler at once and returns nil: the
	// status counted is then the one the error handler wrote, and it
	// still runs only once. Without it, the status is the one the
	// framework's default error handler gives the error, and the error
	// is returned as usual. Other frameworks have no such error.
	HandleError bool
}

// DefaultHitsConfig is the default HitsConfig of every adapter: the
// default names, the rest zero.
func DefaultHitsConfig[C any]() HitsConfig[C] {
	return HitsConfig[C]{HitsName: DefaultHitsName, UnmatchedName: DefaultUnmatchedName}
}

// Glue is what the core reads of a request through the framework, for
// the visitor of a config without VisitorID. A nil field reads "".
type Glue[C any] struct {
	// ClientIP is the address of a config without ClientIP: the
	// connection's IP without its port (RemoteAddr), or the rule the app
	// gave its framework for trusted proxies (Echo's IPExtractor).
	ClientIP func(c C) string
	// UserAgent is the request's User-Agent header.
	UserAgent func(c C) string
}

// HTTP is the Glue of a framework whose context holds an *http.Request,
// req. trusted, when not nil, gives the framework's rule for a client's
// address behind proxies (Echo's IPExtractor) when the app set one; the
// connection's address (RemoteAddr) is read otherwise.
func HTTP[C any](req func(c C) *http.Request, trusted func(c C) func(*http.Request) string) Glue[C] {
	return Glue[C]{
		ClientIP: func(c C) string {
			if trusted != nil {
				if ip := trusted(c); ip != nil {
					return ip(req(c))
				}
			}
			return RemoteAddr(req(c))
		},
		UserAgent: func(c C) string { return UserAgent(req(c)) },
	}
}

// A Meter is a middleware's state: its config checked, with the series
// it counts in. It is safe for concurrent use.
type Meter[C any] struct {
	*tracker
	cfg       HitsConfig[C]
	userAgent func(C) string
}

// orNone is f, or for nil a hook that reads "".
func orNone[C any](f func(C) string) func(C) string {
	if f == nil {
		return func(C) string { return "" }
	}
	return f
}

// Meter checks cfg and returns the Meter of a middleware, with glue for
// the visitor's defaults. Its errors name the field at fault; the
// adapter prefixes its own name.
func (cfg HitsConfig[C]) Meter(glue Glue[C]) (*Meter[C], error) {
	t, err := newTracker(config{Recorder: cfg.Recorder, HitsName: cfg.HitsName, Routes: cfg.Routes,
		UnmatchedName: cfg.UnmatchedName, StatusClasses: cfg.StatusClasses,
		VisitorRoutes: cfg.VisitorRoutes, VisitorSeries: cfg.VisitorSeries})
	if err != nil {
		return nil, err
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = orNone(glue.ClientIP)
	}
	return &Meter[C]{tracker: t, cfg: cfg, userAgent: orNone(glue.UserAgent)}, nil
}

// Skip is the config's Skipper: whether a request is passed on uncounted.
func (m *Meter[C]) Skip(c C) bool { return m.cfg.Skipper != nil && m.cfg.Skipper(c) }

// HandleError is the config's HandleError.
func (m *Meter[C]) HandleError() bool { return m.cfg.HandleError }

// Count records a finished request, of context c, not marked with
// timeseries.Skip: method as the client sent it, route the template the
// router matched ("" for none), status the one the client was sent, d
// its duration (Elapsed of the Begin taken before the handler chain). It
// calls the config's hooks for the series and the visitor.
func (m *Meter[C]) Count(c C, method, route string, status int, d time.Duration) {
	q := request{Method: method, Status: status, Duration: d}
	if m.cfg.Routes {
		q.Route = route
	}
	if m.cfg.SeriesName != nil {
		q.Series = m.cfg.SeriesName(c)
	}
	switch {
	case !m.visitors:
	case m.cfg.VisitorID != nil:
		q.Visitor = timeseries.Visitor{ID: m.cfg.VisitorID(c)}
	default:
		q.Visitor = timeseries.Visitor{Addr: m.cfg.ClientIP(c), UserAgent: m.userAgent(c)}
	}
	m.record(q)
}

// Status is the status to count when the framework keeps it itself:
// status its record (the code set, or its default), sent whether that
// code is what the client gets (written already, or the handler chain
// finished so the framework will write it), hijacked whether the
// connection was taken before anything was written. See Writer.Status.
func Status(status int, sent, hijacked bool) int {
	switch {
	case hijacked:
		return http.StatusSwitchingProtocols
	case !sent:
		return http.StatusInternalServerError
	}
	return status
}

// A FreeList recycles an adapter's per-request values (a writer of its
// own), so that counting costs a request no allocation. Put zeroes a
// value.
type FreeList[T any] struct{ p sync.Pool }

// Get returns a recycled value, or a new zero one.
func (p *FreeList[T]) Get() *T {
	if v, ok := p.p.Get().(*T); ok {
		return v
	}
	return new(T)
}

// Put zeroes v and keeps it for a later Get.
func (p *FreeList[T]) Put(v *T) {
	var zero T
	*v = zero
	p.p.Put(v)
}
