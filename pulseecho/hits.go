package pulseecho

import (
	"fmt"
	"net/http"
	"reflect"

	"github.com/labstack/echo/v4"
	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig configures the Hits middleware: the fields of every Pulse
// adapter, documented at adapter.HitsConfig, HandleError included. Nil
// and zero fields take the values of DefaultHitsConfig. Without
// VisitorID or ClientIP, a visitor's address is Echo's IPExtractor's
// when the app set one (to trust its proxies), else the connection's, so
// a forged X-Forwarded-For mints nobody. Requests marked with
// timeseries.Skip(c.Response()) are not counted.
type HitsConfig adapter.HitsConfig[echo.Context]

// DefaultHitsConfig is the default Hits configuration.
var DefaultHitsConfig = HitsConfig(adapter.DefaultHitsConfig[echo.Context]())

// Hits returns a middleware that counts every request in the series
// "hits" of rec. It panics if rec is nil.
func Hits(rec *timeseries.Recorder) echo.MiddlewareFunc {
	return HitsWithConfig(HitsConfig{Recorder: rec})
}

// HitsWithConfig returns a Hits middleware with config. It panics on an
// invalid config; use ToMiddleware to get the error instead.
func HitsWithConfig(config HitsConfig) echo.MiddlewareFunc {
	return adapter.Must(config.ToMiddleware())
}

// glue reads the visitor's defaults through Echo: the address by the
// app's IPExtractor, when it set one.
var glue = adapter.HTTP(echo.Context.Request, ipExtractor)

func ipExtractor(c echo.Context) func(*http.Request) string {
	if e := c.Echo(); e != nil {
		return e.IPExtractor
	}
	return nil
}

// ToMiddleware validates the config, creates the fixed series, and
// returns the middleware.
func (config HitsConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	m, err := adapter.HitsConfig[echo.Context](config).Meter(glue)
	if err != nil {
		return nil, fmt.Errorf("pulseecho: hits: %w", err)
	}
	// Echo v4 builds the handler's closure on every request: it holds
	// next and h, two words, so each request allocates no more.
	h := &hits{m: m, routes: config.Routes}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return h.serve(c, next) }
	}, nil
}

// hits is the state of one Hits middleware.
type hits struct {
	m      *adapter.Meter[echo.Context]
	routes bool
}

// serve counts one request to next.
func (h *hits) serve(c echo.Context, next echo.HandlerFunc) (err error) {
	m := h.m
	if m.Skip(c) {
		return next(c)
	}
	start := m.Begin()
	// The mark of timeseries.Skip(c.Response()) is found through
	// Response.Unwrap, so the Writer that takes it goes under the
	// Response while the handler and the error handler run. Deferred,
	// so that a panic is counted as the 500 it becomes.
	resp := c.Response()
	w := adapter.NewWriter(resp.Writer)
	resp.Writer = w
	finished := false
	defer func() {
		resp.Writer = w.ResponseWriter
		if !w.Skipped() {
			status := responseStatus(c, w, err, finished)
			m.Count(c, c.Request().Method, route(c, status, h.routes), status, m.Elapsed(start))
		}
		w.Release()
	}()
	if err = next(c); err != nil && m.HandleError() {
		c.Error(err)
		err = nil
	}
	finished = true
	return err
}

// responseStatus is the status written (a hijack's 101 and a panic's 500
// included, see adapter.Writer.Status), or for an error returned with
// nothing written, the one Echo's error handler will write.
func responseStatus(c echo.Context, w *adapter.Writer, err error, finished bool) int {
	if err != nil && !c.Response().Committed && !w.Hijacked() {
		return errorStatus(err)
	}
	return w.Status(finished)
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

// route returns the request's route template, "" when no route matched
// or routes are not counted.
func route(c echo.Context, status int, routes bool) string {
	if !routes {
		return ""
	}
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
