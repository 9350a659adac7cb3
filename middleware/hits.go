package middleware

import (
	"fmt"
	"net/http"
	"reflect"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig configures the Hits middleware. Nil and zero fields take the
// values of DefaultHitsConfig.
type HitsConfig struct {
	// Skipper decides, before the handler runs, that a request is not
	// counted. Requests marked with timeseries.Skip(c.Response()) are not
	// counted either.
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
	// Without it, the status is the one Echo's default error handler
	// answers the error with (*echo.HTTPError's code, or its Internal's
	// when that is an *echo.HTTPError too; 500 for any other error,
	// wrapped ones included) and the error is returned as usual.
	HandleError bool

	// VisitorID returns the id of the request's visitor, hashed under
	// the day's salt like an address; "" counts no visitor (bots, health
	// checks). Nil means the client's address and User-Agent: the address
	// is Echo's IPExtractor's when the app set one (to trust its proxies),
	// else the connection's, so a forged X-Forwarded-For mints nobody.
	// It is not called when the Recorder counts no visitors.
	VisitorID func(c echo.Context) string
	// VisitorRoutes counts unique visitors per route too, VisitorSeries
	// per SeriesName series; the hits series always counts them, unless
	// the Recorder has DisableVisitors.
	VisitorRoutes bool
	VisitorSeries bool
}

// DefaultHitsConfig is the default Hits configuration.
var DefaultHitsConfig = HitsConfig{
	Skipper:       echomw.DefaultSkipper,
	HitsName:      adapter.DefaultHitsName,
	UnmatchedName: adapter.DefaultUnmatchedName,
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
	return adapter.Must(config.ToMiddleware())
}

// ToMiddleware validates the config, creates the fixed series, and
// returns the middleware.
func (config HitsConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	if config.Skipper == nil {
		config.Skipper = DefaultHitsConfig.Skipper
	}
	t, err := adapter.New(adapter.Config{
		Recorder: config.Recorder, HitsName: config.HitsName, Routes: config.Routes,
		UnmatchedName: config.UnmatchedName, StatusClasses: config.StatusClasses,
		VisitorRoutes: config.VisitorRoutes, VisitorSeries: config.VisitorSeries,
	})
	if err != nil {
		return nil, fmt.Errorf("middleware: hits: %w", err)
	}
	h := &hits{config: config, track: t}
	return h.middleware, nil
}

type hits struct {
	config HitsConfig
	track  *adapter.Tracker
}

func (h *hits) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		if h.config.Skipper(c) {
			return next(c)
		}
		start := h.track.Begin()
		// The mark of timeseries.Skip(c.Response()) is found through
		// Response.Unwrap, so the Writer that takes it goes under the
		// Response, for as long as the handler and the error handler run.
		// Recording is deferred, so that a panicking handler is counted
		// as the 500 it becomes; the panic goes on up untouched.
		resp := c.Response()
		w := adapter.NewWriter(resp.Writer)
		resp.Writer = w
		finished := false
		defer func() {
			resp.Writer = w.ResponseWriter
			if !w.Skipped() {
				h.record(c, w, err, finished, start)
			}
			w.Release()
		}()
		err = next(c)
		if err != nil && h.config.HandleError {
			c.Error(err)
			err = nil
		}
		finished = true
		return err
	}
}

// record counts a request not marked with timeseries.Skip: the status is
// the one written (a hijack's 101 and a panic's 500 included, see
// adapter.Writer.Status), or for an error returned with nothing written,
// the one Echo's error handler will write.
func (h *hits) record(c echo.Context, w *adapter.Writer, err error, finished bool, start adapter.Start) {
	status := w.Status(finished)
	if err != nil && !c.Response().Committed && !w.Hijacked() {
		status = errorStatus(err)
	}
	r := adapter.Request{Method: c.Request().Method, Status: status, Duration: h.track.Elapsed(start)}
	if h.config.Routes {
		r.Route = route(c, status)
	}
	if h.config.SeriesName != nil {
		r.Series = h.config.SeriesName(c)
	}
	if h.track.Visits() {
		r.Visitor = h.visitor(c)
	}
	h.track.Record(r)
}

// errorStatus is the status Echo's default error handler answers err
// with: an *echo.HTTPError's code, or that of an *echo.HTTPError it holds
// as Internal, and 500 for any other error, a wrapped *echo.HTTPError
// included. It is not errors.As, which would also count differently
// from the response and move its target to the heap on every request
// that fails.
func errorStatus(err error) int {
	he, ok := err.(*echo.HTTPError)
	if !ok {
		return http.StatusInternalServerError
	}
	if inner, ok := he.Internal.(*echo.HTTPError); ok {
		return inner.Code
	}
	return he.Code
}

var (
	notFoundHandler         = reflect.ValueOf(echo.NotFoundHandler).Pointer()
	methodNotAllowedHandler = reflect.ValueOf(echo.MethodNotAllowedHandler).Pointer()
)

// route returns the request's route template, "" when no route matched.
func route(c echo.Context, status int) string {
	path := c.Path()
	if path != "" && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) {
		// Echo names a partial match's path even when no route matched;
		// only its stand-in handlers tell.
		if p := reflect.ValueOf(c.Handler()).Pointer(); p == notFoundHandler || p == methodNotAllowedHandler {
			return ""
		}
	}
	return path
}

// visitor is who made the request; see HitsConfig.VisitorID.
func (h *hits) visitor(c echo.Context) timeseries.Visitor {
	if h.config.VisitorID != nil {
		return timeseries.Visitor{ID: h.config.VisitorID(c)}
	}
	var clientIP func(*http.Request) string
	if e := c.Echo(); e != nil {
		clientIP = e.IPExtractor // nil: the connection's address
	}
	return adapter.ClientVisitor(c.Request(), clientIP)
}
