// Package pulsefiber counts the requests of a Fiber v2 app in Pulse time
// series. It is Fiber's glue to package adapter, so it counts, names,
// times and skips as Pulse's other adapters do:
//
//	app := fiber.New()
//	app.Use(recover.New()) // outside: a panic counts as the 500 it becomes
//	app.Use(pulsefiber.HitsWithConfig(pulsefiber.HitsConfig{
//		Recorder:      rec,
//		Routes:        true, // "GET /posts/:id", never the raw URL
//		StatusClasses: true, // "status:2xx" …
//	}))
//
// Routes are named by the template they were registered with; Fiber's
// own 404 and 405 are "unmatched". A handler keeps its request out of the
// counts with Skip(c). A handler's returned error counts as the status
// Fiber's default error handler gives it (a *fiber.Error's code, else
// 500), or with HandleError, as the status the app's error handler
// writes. Package pulsefiber/mount serves the dashboard.
package pulsefiber

import (
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig configures the middleware: the fields of every Pulse
// adapter, documented at adapter.HitsConfig. Nil and zero fields take the
// values of DefaultHitsConfig. ClientIP is nil by default: c.IP(), the
// connection's address unless the app set Fiber's ProxyHeader.
type HitsConfig adapter.HitsConfig[*fiber.Ctx]

// DefaultHitsConfig is the default configuration.
var DefaultHitsConfig = HitsConfig(adapter.DefaultHitsConfig[*fiber.Ctx]())

// Hits returns a middleware that counts every request in the series
// "hits" of rec. It panics if rec is nil.
func Hits(rec *timeseries.Recorder) fiber.Handler { return HitsWithConfig(HitsConfig{Recorder: rec}) }

// HitsWithConfig returns the middleware configured by cfg. It panics on
// an invalid config; use ToMiddleware to get the error instead.
func HitsWithConfig(cfg HitsConfig) fiber.Handler { return adapter.Must(cfg.ToMiddleware()) }

var glue = adapter.Glue[*fiber.Ctx]{ClientIP: (*fiber.Ctx).IP,
	UserAgent: func(c *fiber.Ctx) string { return c.Get(fiber.HeaderUserAgent) }}

// ToMiddleware validates cfg, creates the fixed series, and returns the
// middleware, to mount with the app's Use before the routes.
func (cfg HitsConfig) ToMiddleware() (fiber.Handler, error) {
	m, err := adapter.HitsConfig[*fiber.Ctx](cfg).Meter(glue)
	if err != nil {
		return nil, fmt.Errorf("pulsefiber: %w", err)
	}
	return func(c *fiber.Ctx) (err error) {
		if m.Skip(c) {
			return c.Next()
		}
		start, finished, layer := m.Begin(), false, c.Route()
		// Deferred, so that a panic is counted as the 500 it becomes.
		defer func() {
			if c.Locals(skipKey{}) == nil {
				m.Count(c, c.Method(), route(c, layer), status(c, err, finished), m.Elapsed(start))
			}
		}()
		if err = c.Next(); err != nil && m.HandleError() {
			err = c.App().ErrorHandler(c, err)
		}
		finished = true
		return err
	}, nil
}

// status is what the client is sent: 500 for a panic, the status
// Fiber's default error handler gives an error returned, else the one set.
func status(c *fiber.Ctx, err error, finished bool) int {
	var fe *fiber.Error
	switch {
	case !finished:
		return fiber.StatusInternalServerError
	case err == nil:
		return c.Response().StatusCode()
	case errors.As(err, &fe):
		return fe.Code
	}
	return fiber.StatusInternalServerError
}

// route is the template of the route matched after layer, the
// middleware's own: "" when none was, as for Fiber's own 404 and 405.
func route(c *fiber.Ctx, layer *fiber.Route) string {
	if r := c.Route(); r != layer {
		return r.Path
	}
	return ""
}

type skipKey struct{}

// Skip keeps c's request out of the counts of every pulsefiber
// middleware it passes through: Fiber's timeseries.Skip.
func Skip(c *fiber.Ctx) { c.Locals(skipKey{}, true) }
