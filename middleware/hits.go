package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig configures the Hits middleware. Nil and zero fields take the
// values of DefaultHitsConfig.
type HitsConfig struct {
	// Skipper decides, before the handler runs, that a request is not
	// counted. Requests marked with Skip are not counted either.
	Skipper echomw.Skipper

	// Recorder counts the hits; required.
	Recorder *timeseries.Recorder

	// HitsName is the series of every counted request (default "hits").
	HitsName string

	// Routes adds a series per route, named by method and route template
	// as registered ("GET /posts/:id"), never by the raw URL, so the
	// names are bounded by the app's routes. Requests that match no route
	// fold into UnmatchedName; methods outside the standard set are named
	// "OTHER".
	Routes bool
	// UnmatchedName is the route series of requests that match no route
	// (default "unmatched").
	UnmatchedName string

	// StatusClasses adds the series status:1xx … status:5xx (status:other
	// for anything else).
	StatusClasses bool

	// SeriesName names one more series for a request, e.g. per tenant;
	// "" means none. Names are checked once and share the Recorder's cap
	// on distinct names, so a client cannot create keys without bound.
	SeriesName func(c echo.Context) string

	// HandleError calls the app's error handler when the handler returns
	// an error, and returns nil: the status counted is then the one the
	// error handler wrote, and the error handler still runs only once.
	// Without it, the status is taken from the error (*echo.HTTPError's
	// code, 500 for any other error) and the error is returned as usual.
	HandleError bool
}

// DefaultHitsConfig is the default Hits configuration.
var DefaultHitsConfig = HitsConfig{
	Skipper:       echomw.DefaultSkipper,
	HitsName:      "hits",
	UnmatchedName: "unmatched",
}

// Hits returns a middleware that counts every request in the series
// "hits" of rec. It panics if rec is nil.
func Hits(rec *timeseries.Recorder) echo.MiddlewareFunc {
	c := DefaultHitsConfig
	c.Recorder = rec
	return HitsWithConfig(c)
}

// HitsWithConfig returns a Hits middleware with config. It panics on an
// invalid config; use ToMiddleware to get the error instead.
func HitsWithConfig(config HitsConfig) echo.MiddlewareFunc {
	mw, err := config.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
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

// maxCachedNames bounds the cache of SeriesName results; names past it
// are still counted, through the Recorder's own lookup.
const maxCachedNames = 4096

// ToMiddleware validates the config, creates the fixed series, and
// returns the middleware.
func (config HitsConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	if config.Recorder == nil {
		return nil, errors.New("middleware: hits: Recorder is nil")
	}
	if config.Skipper == nil {
		config.Skipper = DefaultHitsConfig.Skipper
	}
	if config.HitsName == "" {
		config.HitsName = DefaultHitsConfig.HitsName
	}
	if config.UnmatchedName == "" {
		config.UnmatchedName = DefaultHitsConfig.UnmatchedName
	}
	h := &hits{config: config, rec: config.Recorder}
	var err error
	if h.hits, err = h.rec.Counter(config.HitsName); err != nil {
		return nil, fmt.Errorf("middleware: hits: HitsName: %w", err)
	}
	if config.Routes {
		if h.unmatched, err = h.rec.Counter(config.UnmatchedName); err != nil {
			return nil, fmt.Errorf("middleware: hits: UnmatchedName: %w", err)
		}
		for i := range h.routes {
			h.routes[i].Store(&map[string]*timeseries.Counter{})
		}
	}
	if config.StatusClasses {
		for i := range h.status {
			name := "status:other"
			if i > 0 {
				name = fmt.Sprintf("status:%dxx", i)
			}
			if h.status[i], err = h.rec.Counter(name); err != nil {
				return nil, fmt.Errorf("middleware: hits: %w", err)
			}
		}
	}
	h.named.Store(&map[string]*timeseries.Counter{})
	return h.middleware, nil
}

type hits struct {
	config    HitsConfig
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

func (h *hits) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h.config.Skipper(c) {
			return next(c)
		}
		err := next(c)
		if err != nil && h.config.HandleError {
			c.Error(err)
			err = nil
		}
		if Skipped(c) {
			return err
		}
		status := c.Response().Status
		if err != nil && !c.Response().Committed {
			status = http.StatusInternalServerError
			var he *echo.HTTPError
			if errors.As(err, &he) {
				status = he.Code
			}
		}
		var buf [4]*timeseries.Counter
		counters := append(buf[:0], h.hits)
		if h.config.Routes {
			counters = append(counters, h.route(c, status))
		}
		if h.config.StatusClasses {
			class := status / 100
			if class < 1 || class > 5 {
				class = 0
			}
			counters = append(counters, h.status[class])
		}
		if h.config.SeriesName != nil {
			if name := h.config.SeriesName(c); name != "" {
				if ctr := h.namedCounter(name); ctr != nil {
					counters = append(counters, ctr)
				}
			}
		}
		h.rec.Record(counters...)
		return err
	}
}

var (
	notFoundHandler         = reflect.ValueOf(echo.NotFoundHandler).Pointer()
	methodNotAllowedHandler = reflect.ValueOf(echo.MethodNotAllowedHandler).Pointer()
)

// route returns the series of the request's route.
func (h *hits) route(c echo.Context, status int) *timeseries.Counter {
	path := c.Path()
	if path == "" {
		return h.unmatched
	}
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		// Echo names a partial match's path even when no route matched;
		// only its stand-in handlers tell.
		if p := reflect.ValueOf(c.Handler()).Pointer(); p == notFoundHandler || p == methodNotAllowedHandler {
			return h.unmatched
		}
	}
	m := methodIndex(c.Request().Method)
	if ctr, ok := (*h.routes[m].Load())[path]; ok {
		return ctr
	}
	if ctr := h.addName(&h.routes[m], path, methodName(m)+" "+path, 0); ctr != nil {
		return ctr
	}
	return h.unmatched // a template no series name can hold
}

// namedCounter returns the series of a SeriesName result, or nil when the
// name is invalid.
func (h *hits) namedCounter(name string) *timeseries.Counter {
	if ctr, ok := (*h.named.Load())[name]; ok {
		return ctr
	}
	return h.addName(&h.named, name, name, maxCachedNames)
}

// addName looks up a series by full name and caches it under key. limit
// bounds the cache (0: no bound, for names the app's routes bound).
func (h *hits) addName(cache *atomic.Pointer[map[string]*timeseries.Counter], key, name string, limit int) *timeseries.Counter {
	ctr, err := h.rec.Counter(name)
	if err != nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	old := *cache.Load()
	if _, ok := old[key]; ok || (limit > 0 && len(old) >= limit) {
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
