// Package adaptertest is the conformance table every Pulse adapter
// passes, to run against an adapter of your own: Run has the adapter
// serve apps (its middleware, its routes, its dashboard mount) on a real
// listener over a real Redis, sends them requests over TCP, and checks
// what they write there, row by row. Pulse's six adapters (Echo v4, Echo
// v5, net/http, Gin, chi, Fiber) run it in their tests.
//
// The kit names no framework: an App says which routes to serve and how
// each behaves (a Kind), and the adapter's test builds them with its
// framework's own handlers, so that a framework not on net/http (Fiber,
// on fasthttp) runs every row natively. An app that is an http.Handler
// needs only HTTP, which serves it and gives each Route as one (Route.HTTP).
//
// The caller owns the Redis, as with redigo: Run takes a Pool to one
// server (not a cluster) and writes only keys under a prefix of its own,
// which it deletes at the end. It starts no Redis and reads no
// environment.
package adaptertest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// An Adapter is how Run has the adapter under test serve its apps.
type Adapter struct {
	// Name names the adapter in the table's summary.
	Name string
	// Start serves app on a real listener until the Server is closed:
	// one counting middleware per Recorder, the first outermost, each
	// with Routes and StatusClasses on, the app's Hooks and HandleError,
	// and every other field at its default; app.Routes, each for its
	// method alone, each behaving as its Kind says; when app.ErrorStatus
	// is set, an error handler answering every returned error with it;
	// and, when app.Dashboard is set, the dashboard mounted by the
	// adapter's mount at its Prefix, behind its Login. A panic in a
	// handler is recovered as the framework usually does (net/http: the
	// server; Fiber: its recover middleware, outside the counting).
	Start func(app App) (Server, error)
	// Template is the template the router names a route of App.Routes by,
	// given its Path ("/status/{code}" gives "/status/:code" for Echo and
	// Gin); nil keeps the Path.
	Template func(path string) string
	// ReturnsErrors says the framework's handlers return errors (Echo,
	// Fiber): Start then serves KindError routes and ErrorStatus, and the
	// rows of errors run. Without it those rows are not applicable.
	ReturnsErrors bool
	// StreamsAfterHandler says the framework writes a streamed body once
	// the handler chain has returned, where no middleware sees it end
	// (fasthttp's body stream, whose reader a middleware cannot wrap
	// without closing it): a streamed answer's duration is the
	// handler's, and the streamed durations row does not apply.
	StreamsAfterHandler bool
}

// A Server is an app an Adapter serves.
type Server interface {
	// URL is its base URL, "http://127.0.0.1:port", on a listener that
	// takes connections from any loopback address.
	URL() string
	// Close stops the server and returns once every request it was sent
	// has left the app, the counting middlewares included: a hijacked
	// connection's handler, a streamed body, a panic.
	Close()
}

// App is what an Adapter's Start serves.
type App struct {
	Recorders []*timeseries.Recorder
	Routes    []Route
	Dashboard *Dashboard
	// Hooks, when not nil, are the middlewares' config hooks.
	Hooks *Hooks
	// HandleError is the middlewares' HandleError.
	HandleError bool
	// ErrorStatus, when not 0, is the status the app's own error handler
	// answers every returned error with, in place of the framework's
	// default one. Only for an Adapter that ReturnsErrors.
	ErrorStatus int
}

// Header reads a request header, as the framework gives it.
type Header func(name string) string

// Hooks are the config hooks of an App's middlewares, each reading the
// request's headers: the adapter sets its config's SeriesName, VisitorID
// and Skipper to call them with its framework's header reader.
type Hooks struct {
	SeriesName func(h Header) string
	VisitorID  func(h Header) string
	Skipper    func(h Header) bool
}

// Dashboard is the dashboard an App mounts, at Prefix, behind Login
// (nil: none): the dashboard of Recorder, its Store and its Health
// (dashboard.Config{Store: d.Recorder.Store(), Health: d.Recorder}).
// Login is net/http middleware, which an adapter turns into its
// framework's (echo.WrapMiddleware, Fiber's adaptor). The kit names no
// dashboard type, so that it links no dashboard: the adapter's mount does.
type Dashboard struct {
	Prefix   string
	Recorder *timeseries.Recorder
	Login    func(http.Handler) http.Handler
}

// a row of the table: need says why it does not apply to an adapter
// ("" when it does).
type row struct {
	name string
	run  func(t testing.TB, k *kit)
	need func(a Adapter) string
}

// returnsErrors is the need of the rows of returned errors.
func returnsErrors(a Adapter) string {
	if a.ReturnsErrors {
		return ""
	}
	return "its handlers return no errors (Adapter.ReturnsErrors unset)"
}

// streamsInHandler is the need of the streamed durations row.
func streamsInHandler(a Adapter) string {
	if !a.StreamsAfterHandler {
		return ""
	}
	return "its streamed bodies are written after the handler chain (Adapter.StreamsAfterHandler)"
}

// rows are the table, in the order Run runs it.
var rows = []row{
	{"counts", testCounts, nil},
	{"unmatched", testUnmatched, nil},
	{"refused methods", testRefused, nil},
	{"methods", testMethods, nil},
	{"panic", testPanic, nil},
	{"hijack", testHijack, nil},
	{"streaming", testStreaming, nil},
	{"skip", testSkip, nil},
	{"nested skip", testNestedSkip, nil},
	{"config hooks", testHooks, nil},
	{"errors", testErrors, returnsErrors},
	{"error handler", testErrorHandler, returnsErrors},
	{"durations", testDurations, nil},
	{"streamed durations", testStreamedDurations, streamsInHandler},
	{"visitors", testVisitors, nil},
	{"dashboard", testDashboard, nil},
	{"dashboard login", testDashboardLogin, nil},
	{"redis down", testRedisDown, nil},
}

// Run runs the conformance table against a, on the Redis behind pool,
// each row a subtest; a row the adapter declares not applicable is
// skipped with its reason. It ends by logging the table: each row run,
// failed or not applicable.
func Run(t *testing.T, pool timeseries.Pool, a Adapter) {
	t.Helper()
	a = a.withDefaults()
	var summary []string
	for _, r := range rows {
		if why := r.applies(a); why != "" {
			t.Run(r.name, func(t *testing.T) { t.Skip("not applicable: " + why) })
			summary = append(summary, outcome(r.name, "not applicable: "+why))
			continue
		}
		ok := t.Run(r.name, func(t *testing.T) { runRow(t, pool, a, r) })
		summary = append(summary, outcome(r.name, map[bool]string{true: "passed", false: "FAILED"}[ok]))
	}
	t.Log(table(a.Name, summary))
}

// withDefaults fills a's nil fields.
func (a Adapter) withDefaults() Adapter {
	if a.Template == nil {
		a.Template = func(p string) string { return p }
	}
	if a.Name == "" {
		a.Name = "adapter"
	}
	return a
}

// applies is "" when r applies to a, else why not.
func (r row) applies(a Adapter) string {
	if r.need == nil {
		return ""
	}
	return r.need(a)
}

// runRow runs r on t, with a key prefix of its own deleted at the end.
func runRow(t testing.TB, pool timeseries.Pool, a Adapter, r row) {
	k := &kit{adapter: a, pool: pool, prefix: "pulse-kit:" + randomHex() + ":"}
	t.Cleanup(func() { k.forget(t) })
	r.run(t, k)
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
func (k *kit) recorder(t testing.TB, prefix string) *timeseries.Recorder {
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

// name is the route series of method and path, as the adapter names it.
func (k *kit) name(method, path string) string { return method + " " + k.adapter.Template(path) }

// outcome is a line of the table's summary.
func outcome(name, result string) string { return fmt.Sprintf("  %-20s %s", name, result) }

// table is the summary Run logs: the adapter's name, then a line a row.
func table(adapter string, lines []string) string {
	return "conformance table of " + adapter + ":\n" + strings.Join(lines, "\n")
}

// Request is h's hooks for a config on *http.Request (pulsehttp,
// pulsechi), reading r.Header.
func (h *Hooks) Request() (seriesName, visitorID func(r *http.Request) string, skipper func(r *http.Request) bool) {
	return func(r *http.Request) string { return h.SeriesName(r.Header.Get) },
		func(r *http.Request) string { return h.VisitorID(r.Header.Get) },
		func(r *http.Request) bool { return h.Skipper(r.Header.Get) }
}
