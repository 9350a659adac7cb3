// Package pulsegin counts the requests of a Gin app in Pulse time series.
// It is Gin's glue to package adapter, so it counts, names, times and
// skips exactly as Pulse's other adapters do:
//
//	r := gin.New()
//	r.Use(pulsegin.HitsWithConfig(pulsegin.HitsConfig{
//		Recorder:      rec,
//		Routes:        true, // "GET /posts/:id", never the raw URL
//		StatusClasses: true, // "status:2xx" …
//	}))
//
// Routes are named by c.FullPath(); Gin's own 404 and 405 are
// "unmatched". Gin's own redirects (RedirectTrailingSlash,
// RedirectFixedPath) are answered before any middleware runs, so they are
// not counted. A handler keeps its request out of the counts with
// timeseries.Skip(c.Writer). Package pulsegin/mount serves the dashboard.
package pulsegin

import (
	"bufio"
	"fmt"
	"net"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig configures the middleware: the fields of every Pulse
// adapter, documented at adapter.HitsConfig. Nil and zero fields take the
// values of DefaultHitsConfig. ClientIP is nil by default, the
// connection's address: set it to (*gin.Context).ClientIP only once the
// engine trusts no proxy but yours (SetTrustedProxies), since Gin's
// default trusts every X-Forwarded-For.
type HitsConfig adapter.HitsConfig[*gin.Context]

// DefaultHitsConfig is the default configuration.
var DefaultHitsConfig = HitsConfig(adapter.DefaultHitsConfig[*gin.Context]())

// Hits returns a middleware that counts every request in the series
// "hits" of rec. It panics if rec is nil.
func Hits(rec *timeseries.Recorder) gin.HandlerFunc { return HitsWithConfig(HitsConfig{Recorder: rec}) }

// HitsWithConfig returns the middleware configured by cfg. It panics on
// an invalid config; use ToMiddleware to get the error instead.
func HitsWithConfig(cfg HitsConfig) gin.HandlerFunc { return adapter.Must(cfg.ToMiddleware()) }

// ToMiddleware validates cfg, creates the fixed series, and returns the
// middleware, to mount with the engine's Use before the routes.
func (cfg HitsConfig) ToMiddleware() (gin.HandlerFunc, error) {
	m, err := adapter.HitsConfig[*gin.Context](cfg).Meter(adapter.HTTP(func(c *gin.Context) *http.Request { return c.Request }, nil))
	if err != nil {
		return nil, fmt.Errorf("pulsegin: %w", err)
	}
	return func(c *gin.Context) {
		if m.Skip(c) {
			c.Next()
			return
		}
		start, w := m.Begin(), writers.Get()
		w.ResponseWriter, c.Writer = c.Writer, w
		finished := false
		// Deferred, so that a panic is counted as the 500 it becomes.
		defer func() {
			c.Writer = w.ResponseWriter
			if !w.skip {
				m.Count(c, c.Request.Method, c.FullPath(), adapter.Status(w.Status(), finished || w.Written(), w.hijacked), m.Elapsed(start))
			}
			writers.Put(w)
		}()
		c.Next()
		finished = true
	}, nil
}

// writer is Gin's writer, which keeps the status, with the mark of
// timeseries.Skip and a hijack noted: Gin's own reports 200 after one.
type writer struct {
	gin.ResponseWriter
	skip, hijacked bool
}

var writers adapter.FreeList[writer]

// SkipRequest takes the mark, and passes it on to the Pulse middlewares
// around this one.
func (w *writer) SkipRequest() {
	w.skip = true
	timeseries.Skip(w.ResponseWriter)
}

// Hijack hands the connection over: 101, unless a status was written.
func (w *writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = w.hijacked || !w.Written()
	return w.ResponseWriter.Hijack()
}

// Unwrap is the writer below, for http.ResponseController.
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }
