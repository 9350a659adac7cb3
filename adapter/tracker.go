package adapter

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// MaxCachedNames bounds each cache of series (the routes of one method,
// the app-named series); names past it are still counted, through the
// Recorder's own lookup.
const MaxCachedNames = 4096

// config is the part of a HitsConfig the series depend on; its fields
// are documented there.
type config struct {
	Recorder                     *timeseries.Recorder
	HitsName, UnmatchedName      string
	Routes, StatusClasses        bool
	VisitorRoutes, VisitorSeries bool
}

// request is what the core knows of a finished request.
type request struct {
	Method   string
	Route    string // the router's template, "" for no route
	Status   int    // the status the client was sent
	Series   string // an app-named series, "" for none
	Duration time.Duration
	Visitor  timeseries.Visitor // zero when no visitor counts
}

// routeSeries is a route's series and, made on first use, those of its
// status classes (index: status/100, 0 for other).
type routeSeries struct {
	name     string
	template string // the Route it was made for, as the router gave it
	method   int    // methodIndex
	ctr      *timeseries.Counter
	status   [6]atomic.Pointer[timeseries.Counter]
}

// tracker counts finished requests into the series of its config: the
// core of a Meter. It is safe for concurrent use.
type tracker struct {
	cfg       config
	rec       *timeseries.Recorder
	hits      *timeseries.Counter
	unmatched *routeSeries
	status    [6]*timeseries.Counter // index: status/100, 0 for other
	// Begin and Elapsed read the clock only when the Recorder keeps
	// durations; Visits reports whether it keeps visitors.
	durations, visitors bool

	// Read without locks on every request; replaced whole, under mu, when
	// a name is first seen. Route templates are few, so copies are rare.
	mu     sync.Mutex
	routes [otherMethod + 1]atomic.Pointer[map[string]*routeSeries]
	memo   routeMemo
	named  atomic.Pointer[map[string]*timeseries.Counter]
}

// newTracker checks cfg, fills its defaults and creates the fixed series,
// once, when a middleware is built.
func newTracker(cfg config) (*tracker, error) {
	if cfg.Recorder == nil {
		return nil, errors.New("Recorder is nil")
	}
	if cfg.HitsName == "" {
		cfg.HitsName = DefaultHitsName
	}
	if cfg.UnmatchedName == "" {
		cfg.UnmatchedName = DefaultUnmatchedName
	}
	t := &tracker{cfg: cfg, rec: cfg.Recorder,
		durations: cfg.Recorder.KeepsDurations(), visitors: cfg.Recorder.KeepsVisitors()}
	var err error
	if t.hits, err = t.rec.Counter(cfg.HitsName); err != nil {
		return nil, fmt.Errorf("HitsName: %w", err)
	}
	if cfg.Routes {
		t.unmatched = &routeSeries{name: cfg.UnmatchedName}
		if t.unmatched.ctr, err = t.rec.Counter(cfg.UnmatchedName); err != nil {
			return nil, fmt.Errorf("UnmatchedName: %w", err)
		}
		for i := range t.routes {
			t.routes[i].Store(&map[string]*routeSeries{})
		}
	}
	if cfg.StatusClasses {
		for i := range t.status {
			if t.status[i], err = t.rec.Counter(StatusClassName(i * 100)); err != nil {
				return nil, err
			}
		}
	}
	t.named.Store(&map[string]*timeseries.Counter{})
	return t, nil
}

// Record counts one finished request: an atomic add per series and one
// lock each for the durations and the visitor, no allocation once its
// names have been seen.
func (t *tracker) record(r request) {
	f := timeseries.Request{Duration: r.Duration, Visitor: r.Visitor}
	f.Timed[0] = t.hits
	f.Visited = 1 << 0
	class := r.Status / 100
	if class < 1 || class > 5 {
		class = 0
	}
	counted := 0
	if t.cfg.Routes {
		rs := t.route(r)
		f.Timed[1] = rs.ctr
		if t.cfg.VisitorRoutes {
			f.Visited |= 1 << 1
		}
		if t.cfg.StatusClasses {
			if ctr := t.routeStatus(rs, class); ctr != nil {
				f.Counted[counted] = ctr
				counted++
			}
		}
	}
	if t.cfg.StatusClasses {
		f.Counted[counted] = t.status[class]
	}
	if r.Series != "" {
		if ctr := t.namedCounter(r.Series); ctr != nil {
			f.Timed[2] = ctr
			if t.cfg.VisitorSeries {
				f.Visited |= 1 << 2
			}
		}
	}
	t.rec.RecordRequest(f)
}

// route returns the series of the request's route.
func (t *tracker) route(r request) *routeSeries {
	if r.Route == "" {
		return t.unmatched
	}
	m := methodIndex(r.Method)
	if rs := t.memo.find(r.Route, m); rs != nil {
		return rs
	}
	rs, ok := (*t.routes[m].Load())[r.Route]
	if !ok {
		name := RouteSeries(r.Method, r.Route)
		ctr, err := t.rec.Counter(name)
		if err != nil {
			return t.unmatched // a template no series name can hold
		}
		rs = addCached(t, &t.routes[m], r.Route, &routeSeries{name: name, template: r.Route, method: m, ctr: ctr}, MaxCachedNames)
	}
	t.memo.remember(r.Route, rs)
	return rs
}

// routeStatus returns the series of a route's status class, made on the
// class's first request; nil when the name cannot be a series (too long).
func (t *tracker) routeStatus(rs *routeSeries, class int) *timeseries.Counter {
	if ctr := rs.status[class].Load(); ctr != nil {
		return ctr
	}
	ctr, err := t.rec.Counter(classSeries(rs.name, class*100))
	if err != nil {
		return nil
	}
	rs.status[class].CompareAndSwap(nil, ctr)
	return ctr
}

// namedCounter returns the series of an app-named series, or nil when the
// name is invalid.
func (t *tracker) namedCounter(name string) *timeseries.Counter {
	if ctr, ok := (*t.named.Load())[name]; ok {
		return ctr
	}
	ctr, err := t.rec.Counter(name)
	if err != nil {
		return nil
	}
	return addCached(t, &t.named, name, ctr, MaxCachedNames)
}

// addCached caches v under key and returns what the cache holds there.
// limit bounds the cache: route templates are bounded by the app's
// routes, but a RouteName hook could return raw paths, and past the
// limit a name is still counted, through the Recorder's own lookup.
func addCached[V any](t *tracker, cache *atomic.Pointer[map[string]V], key string, v V, limit int) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *cache.Load()
	if cur, ok := old[key]; ok {
		return cur
	}
	if len(old) >= limit {
		return v
	}
	next := make(map[string]V, len(old)+1)
	for k, x := range old {
		next[k] = x
	}
	// A hook may return a view into a buffer its framework reuses (Fiber's
	// c.Params and c.Get): the key is a copy, made once, here.
	next[strings.Clone(key)] = v
	cache.Store(&next)
	return v
}

// Must returns mw, or panics with err: what an adapter's HitsWithConfig
// does with its ToMiddleware's result.
func Must[M any](mw M, err error) M {
	if err != nil {
		panic(err)
	}
	return mw
}
