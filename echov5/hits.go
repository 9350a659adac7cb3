package echov5

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig configures the Hits middleware: the fields of every Pulse
// adapter, documented at adapter.HitsConfig, HandleError included (it
// calls Echo.HTTPErrorHandler). Nil and zero fields take the values of
// DefaultHitsConfig. With Routes, requests the router matched to no
// route and that answer 404 or 405 (Echo's own answers, and
// RouteNotFound routes, a group's included) fold into UnmatchedName;
// Echo's automatic answer to OPTIONS counts under "OPTIONS <path>".
// Without VisitorID or ClientIP, a visitor's address is Echo's
// IPExtractor's when the app set one, else the connection's.
type HitsConfig adapter.HitsConfig[*echo.Context]

// DefaultHitsConfig is the default Hits configuration.
var DefaultHitsConfig = HitsConfig(adapter.DefaultHitsConfig[*echo.Context]())

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
var glue = adapter.HTTP((*echo.Context).Request, ipExtractor)

func ipExtractor(c *echo.Context) func(*http.Request) string {
	if e := c.Echo(); e != nil {
		return e.IPExtractor
	}
	return nil
}

// ToMiddleware validates the config, creates the fixed series, and
// returns the middleware.
func (config HitsConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	m, err := adapter.HitsConfig[*echo.Context](config).Meter(glue)
	if err != nil {
		return nil, fmt.Errorf("echov5: hits: %w", err)
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) (err error) {
			if m.Skip(c) {
				return next(c)
			}
			start := m.Begin()
			// Deferred, so that a panic is counted as the 500 it becomes.
			resp, w := markable(c)
			finished := false
			defer func() {
				if !unmark(c, resp, w) {
					status := responseStatus(c, w, err, finished)
					m.Count(c, c.Request().Method, route(c, status, config.Routes), status, m.Elapsed(start))
				}
				w.Release()
			}()
			if err = next(c); err != nil && m.HandleError() {
				if e := c.Echo(); e != nil && e.HTTPErrorHandler != nil {
					e.HTTPErrorHandler(c, err)
					err = nil
				}
			}
			finished = true
			return err
		}
	}, nil
}

// responseStatus is the status the client is sent: the one written (w
// saw it; a hijack's 101 and a panic's 500 included, see
// adapter.Writer.Status) or, for a handler that returned err with
// nothing written, the one the error handler will write for it: its
// StatusCode(), 500 when it has none. That is echo.ResolveResponseStatus,
// whose errors.As moves its target to the heap on every request that
// fails, so an err that carries its code itself (the router's
// ErrNotFound, an *echo.HTTPError returned as it is) is answered without
// it.
func responseStatus(c *echo.Context, w *adapter.Writer, err error, finished bool) int {
	if err == nil || w.Hijacked() {
		return w.Status(finished)
	}
	if resp, _ := echo.UnwrapResponse(c.Response()); resp != nil && resp.Committed {
		return w.Status(finished)
	}
	if sc, ok := err.(echo.HTTPStatusCoder); ok {
		if s := sc.StatusCode(); s != 0 {
			return s
		}
	}
	_, status := echo.ResolveResponseStatus(c.Response(), err)
	return status
}

// route returns the request's route template, "" when the router matched
// no route or routes are not counted.
func route(c *echo.Context, status int, routes bool) string {
	if !routes {
		return ""
	}
	path := c.Path()
	if path == "" || (status != http.StatusNotFound && status != http.StatusMethodNotAllowed) {
		return path
	}
	// On a miss Echo still names the path of the closest node, so only the
	// route info tells. RouteInfo copies the route's parameters, so it is
	// read only for the statuses a miss answers.
	ri := c.RouteInfo()
	if ri.Name == echo.NotFoundRouteName || ri.Name == echo.MethodNotAllowedRouteName || ri.Method == echo.RouteNotFound {
		return ""
	}
	return path
}
