// Package track is what every Pulse middleware shares, whatever the web
// framework: the series a finished request counts in (hits, its route,
// its status class, an app-named series), the bounded caches of those
// series, and the mark that keeps a request out of the counts. An adapter
// (Echo v4, Echo v5, net/http) only translates its framework's request
// into a Request and calls Tracker.Record.
package track

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/pulse-dev/pulse/timeseries"
)

// Defaults of Config's names.
const (
	DefaultHitsName      = "hits"
	DefaultUnmatchedName = "unmatched"
)

// SkipKey is the key an Echo adapter sets on a request's context to keep
// the request out of the counts.
const SkipKey = "pulse.skip"

// MaxCachedNames bounds each cache of series (the routes of one method,
// the app-named series); names past it are still counted, through the
// Recorder's own lookup.
const MaxCachedNames = 4096

// Config is the framework-neutral part of a middleware's configuration.
type Config struct {
	Recorder      *timeseries.Recorder
	HitsName      string // default DefaultHitsName
	Routes        bool
	UnmatchedName string // default DefaultUnmatchedName
	StatusClasses bool
}

// Request is what an adapter knows of a finished request.
type Request struct {
	Method string
	// Route is the matched route's path template as the router names it
	// ("/posts/:id", "/posts/{id}"), without a method; "" for a request no
	// route matched. The series is "<METHOD> <Route>".
	Route  string
	Status int
	// Series is one more series to count the request in; "" for none.
	Series string
}

// Tracker counts finished requests. It is safe for concurrent use.
type Tracker struct {
	cfg       Config
	rec       *timeseries.Recorder
	hits      *timeseries.Counter
	unmatched *timeseries.Counter
	status    [6]*timeseries.Counter // index: status/100, 0 for other

	// Read without locks on every request; replaced whole, under mu, when
	// a name is first seen. Route templates are few, so copies are rare.
	mu     sync.Mutex
	routes [otherMethod + 1]atomic.Pointer[map[string]*timeseries.Counter]
	named  atomic.Pointer[map[string]*timeseries.Counter]
}

// New checks cfg, fills its defaults and creates the fixed series.
func New(cfg Config) (*Tracker, error) {
	if cfg.Recorder == nil {
		return nil, errors.New("Recorder is nil")
	}
	if cfg.HitsName == "" {
		cfg.HitsName = DefaultHitsName
	}
	if cfg.UnmatchedName == "" {
		cfg.UnmatchedName = DefaultUnmatchedName
	}
	t := &Tracker{cfg: cfg, rec: cfg.Recorder}
	var err error
	if t.hits, err = t.rec.Counter(cfg.HitsName); err != nil {
		return nil, fmt.Errorf("HitsName: %w", err)
	}
	if cfg.Routes {
		if t.unmatched, err = t.rec.Counter(cfg.UnmatchedName); err != nil {
			return nil, fmt.Errorf("UnmatchedName: %w", err)
		}
		for i := range t.routes {
			t.routes[i].Store(&map[string]*timeseries.Counter{})
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

// StatusClassName is the series of a status: "status:2xx" for 200 to 299,
// "status:other" outside 100 to 599.
func StatusClassName(status int) string {
	if class := status / 100; class >= 1 && class <= 5 {
		return fmt.Sprintf("status:%dxx", class)
	}
	return "status:other"
}

// Record counts one finished request: an atomic add per series, no
// allocation once its names have been seen.
func (t *Tracker) Record(r Request) {
	var buf [4]*timeseries.Counter
	counters := append(buf[:0], t.hits)
	if t.cfg.Routes {
		counters = append(counters, t.route(r))
	}
	if t.cfg.StatusClasses {
		class := r.Status / 100
		if class < 1 || class > 5 {
			class = 0
		}
		counters = append(counters, t.status[class])
	}
	if r.Series != "" {
		if ctr := t.namedCounter(r.Series); ctr != nil {
			counters = append(counters, ctr)
		}
	}
	t.rec.Record(counters...)
}

// route returns the series of the request's route.
func (t *Tracker) route(r Request) *timeseries.Counter {
	if r.Route == "" {
		return t.unmatched
	}
	m := methodIndex(r.Method)
	if ctr, ok := (*t.routes[m].Load())[r.Route]; ok {
		return ctr
	}
	if ctr := t.addName(&t.routes[m], r.Route, methodName(m)+" "+r.Route, MaxCachedNames); ctr != nil {
		return ctr
	}
	return t.unmatched // a template no series name can hold
}

// namedCounter returns the series of an app-named series, or nil when the
// name is invalid.
func (t *Tracker) namedCounter(name string) *timeseries.Counter {
	if ctr, ok := (*t.named.Load())[name]; ok {
		return ctr
	}
	return t.addName(&t.named, name, name, MaxCachedNames)
}

// addName looks up a series by full name and caches it under key. limit
// bounds the cache: route templates are bounded by the app's routes, but
// a RouteName hook could return raw paths, and past the limit a name is
// still counted, through the Recorder's own lookup.
func (t *Tracker) addName(cache *atomic.Pointer[map[string]*timeseries.Counter], key, name string, limit int) *timeseries.Counter {
	ctr, err := t.rec.Counter(name)
	if err != nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *cache.Load()
	if _, ok := old[key]; ok || len(old) >= limit {
		return ctr
	}
	next := make(map[string]*timeseries.Counter, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[key] = ctr
	cache.Store(&next)
	return ctr
}

// standardMethods get a route series of their own; others share "OTHER".
var standardMethods = [...]string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace,
}

const otherMethod = len(standardMethods)

func methodIndex(m string) int {
	for i, s := range standardMethods {
		if s == m {
			return i
		}
	}
	return otherMethod
}

func methodName(i int) string {
	if i == otherMethod {
		return "OTHER"
	}
	return standardMethods[i]
}

// Must returns mw, or panics with err: the adapters' HitsWithConfig and
// Middleware, which panic on a config ToMiddleware refuses.
func Must[M any](mw M, err error) M {
	if err != nil {
		panic(err)
	}
	return mw
}
