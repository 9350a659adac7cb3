package adapter

import (
	"net/http"
	"sync"

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
}

// DefaultHitsConfig is the default HitsConfig of every adapter: the
// default names, the rest zero.
func DefaultHitsConfig[C any]() HitsConfig[C] {
	return HitsConfig[C]{HitsName: DefaultHitsName, UnmatchedName: DefaultUnmatchedName}
}

// A Counter is an adapter's middleware's state: its config checked, with
// the Tracker of its series. It is safe for concurrent use.
type Counter[C any] struct {
	*Tracker
	cfg HitsConfig[C]
}

// Counter checks cfg and returns the Counter of a middleware; its errors
// are New's.
func (cfg HitsConfig[C]) Counter() (*Counter[C], error) {
	t, err := New(Config{Recorder: cfg.Recorder, HitsName: cfg.HitsName, Routes: cfg.Routes,
		UnmatchedName: cfg.UnmatchedName, StatusClasses: cfg.StatusClasses,
		VisitorRoutes: cfg.VisitorRoutes, VisitorSeries: cfg.VisitorSeries})
	if err != nil {
		return nil, err
	}
	return &Counter[C]{Tracker: t, cfg: cfg}, nil
}

// Skip is the config's Skipper: whether a request is passed on uncounted.
func (k *Counter[C]) Skip(c C) bool { return k.cfg.Skipper != nil && k.cfg.Skipper(c) }

// Count records a finished request r, of context c, not marked with
// timeseries.Skip: route is the template the router matched ("" for
// none), status the one the client was sent, start the Begin taken
// before the handler chain. It calls the config's hooks for the series
// and the visitor.
func (k *Counter[C]) Count(c C, r *http.Request, route string, status int, start Start) {
	q := Request{Method: r.Method, Status: status, Duration: k.Elapsed(start)}
	if k.cfg.Routes {
		q.Route = route
	}
	if k.cfg.SeriesName != nil {
		q.Series = k.cfg.SeriesName(c)
	}
	switch {
	case !k.Visits():
	case k.cfg.VisitorID != nil:
		q.Visitor = timeseries.Visitor{ID: k.cfg.VisitorID(c)}
	case k.cfg.ClientIP != nil:
		q.Visitor = timeseries.Visitor{Addr: k.cfg.ClientIP(c), UserAgent: UserAgent(r)}
	default:
		q.Visitor = ClientVisitor(r, nil)
	}
	k.Record(q)
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

// A Pool recycles an adapter's per-request values (a writer of its own),
// so that counting costs a request no allocation. Put zeroes a value.
type Pool[T any] struct{ p sync.Pool }

// Get returns a value from the pool, or a new zero one.
func (p *Pool[T]) Get() *T {
	if v, ok := p.p.Get().(*T); ok {
		return v
	}
	return new(T)
}

// Put zeroes v and returns it to the pool.
func (p *Pool[T]) Put(v *T) {
	var zero T
	*v = zero
	p.p.Put(v)
}
