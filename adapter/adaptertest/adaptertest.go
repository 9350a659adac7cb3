// Package adaptertest is the conformance table every Pulse adapter
// passes, to run against an adapter of your own: Run builds apps with the
// adapter (its middleware and its dashboard mount) over a real Redis and
// checks what they write there, row by row. Pulse's five adapters (Echo
// v4, Echo v5, net/http, Gin, chi) run it in their tests.
//
// The caller owns the Redis, as with redigo: Run takes a Pool to one
// server (not a cluster) and writes only keys under a prefix of its own,
// which it deletes at the end. It starts no server and reads no
// environment.
//
//	func TestConformance(t *testing.T) {
//		adaptertest.Run(t, pool, adaptertest.Adapter{
//			Serve: func(app adaptertest.App) (http.Handler, error) {
//				r := myrouter.New()
//				for _, rec := range app.Recorders {
//					r.Use(mypulse.HitsWithConfig(mypulse.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
//				}
//				for _, rt := range app.Routes {
//					r.Handle(rt.Method, rt.Path, rt.Handler)
//				}
//				… mount app.Dashboard, if set …
//				return r, nil
//			},
//		})
//	}
package adaptertest

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// An Adapter is how Run builds apps with the adapter under test.
type Adapter struct {
	// Serve returns app served by the adapter's router: one counting
	// middleware per Recorder, the first outermost, each with Routes and
	// StatusClasses on and every other field at its default; app.Routes,
	// each for its method alone, handlers given as they are (under Echo,
	// echo.WrapHandler; under Gin, gin.WrapH); and, when app.Dashboard is
	// set, the dashboard mounted by the adapter's mount at its Prefix,
	// behind its Login.
	Serve func(app App) (http.Handler, error)
	// Template is the template the router names a route of App.Routes by,
	// given its Path ("/status/{code}" gives "/status/:code" for Echo and
	// Gin); nil keeps the Path.
	Template func(path string) string
}

// App is what an Adapter's Serve builds.
type App struct {
	Recorders []*timeseries.Recorder
	Routes    []Route
	Dashboard *Dashboard
}

// A Route is a route of an App: Method ("GET", or one outside the
// standard set, "PROPFIND") and Path, a literal path whose "{name}"
// segments are parameters.
type Route struct {
	Method, Path string
	Handler      http.Handler
}

// Dashboard is the dashboard an App mounts, at Prefix, behind Login
// (nil: none): the dashboard of Recorder, its Store and its Health
// (dashboard.Config{Store: d.Recorder.Store(), Health: d.Recorder}).
// Login is net/http middleware, which an adapter turns into its
// framework's (echo.WrapMiddleware). The kit names no dashboard type, so
// that it links no dashboard: the adapter's mount does.
type Dashboard struct {
	Prefix   string
	Recorder *timeseries.Recorder
	Login    func(http.Handler) http.Handler
}

// rows are the table, in the order Run runs it.
var rows = []struct {
	name string
	run  func(t *testing.T, k *kit)
}{
	{"counts", testCounts},
	{"unmatched", testUnmatched},
	{"methods", testMethods},
	{"panic", testPanic},
	{"hijack", testHijack},
	{"streaming", testStreaming},
	{"skip", testSkip},
	{"nested skip", testNestedSkip},
	{"durations", testDurations},
	{"visitors", testVisitors},
	{"dashboard", testDashboard},
	{"dashboard login", testDashboardLogin},
	{"redis down", testRedisDown},
}

// Run runs the conformance table against a, on the Redis behind pool.
func Run(t *testing.T, pool timeseries.Pool, a Adapter) {
	t.Helper()
	if a.Template == nil {
		a.Template = func(p string) string { return p }
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			k := &kit{adapter: a, pool: pool, prefix: "pulse-kit:" + randomHex() + ":"}
			t.Cleanup(func() { k.forget(t) })
			row.run(t, k)
		})
	}
}

// kit is one row's state: the adapter, the pool and the key prefix of
// the row's recorders.
type kit struct {
	adapter Adapter
	pool    timeseries.Pool
	prefix  string
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// recorder returns a Recorder over the row's prefix with the default
// precisions, flushing only when told, closed when the test ends. Its
// clock is real time, unless that is within two minutes of a UTC
// midnight: then one minute past it, so that the row's requests and
// visitors fall in one day whenever it runs.
func (k *kit) recorder(t *testing.T, prefix string) *timeseries.Recorder {
	t.Helper()
	rec, err := timeseries.NewRecorder(timeseries.Config{
		Pool: k.pool, Schema: timeseries.Schema{Prefix: prefix}, FlushInterval: time.Hour,
		Clock: timeseries.NewManualClock(dayClear(time.Now().UTC())),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(t.Context()) })
	flush(t, rec) // loads the day's salt
	return rec
}

// dayClear is now, or one minute past the next UTC midnight when now is
// within two minutes before it.
func dayClear(now time.Time) time.Time {
	next := now.Truncate(24 * time.Hour).Add(24 * time.Hour)
	if next.Sub(now) < 2*time.Minute {
		return next.Add(time.Minute)
	}
	return now
}

// serve builds the app of recs, routes and d with the adapter.
func (k *kit) serve(t *testing.T, recs []*timeseries.Recorder, routes []Route, d *Dashboard) http.Handler {
	t.Helper()
	h, err := k.adapter.Serve(App{Recorders: recs, Routes: routes, Dashboard: d})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// name is the route series of method and path, as the adapter names it.
func (k *kit) name(method, path string) string { return method + " " + k.adapter.Template(path) }
