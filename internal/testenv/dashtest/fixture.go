package dashtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// T0 starts a 5 s bucket (and a minute's, mid-hour); Hit.At counts from it.
var T0 = time.Unix(1700000000, 0)

// Now is where New leaves the clock: T0+10m2s, inside the 5 s bucket
// T0+600, which is still open.
var Now = T0.Add(10*time.Minute + 2*time.Second)

// Names that would run script if a page ever put them into HTML or into
// a script element unescaped, and a route's series name.
const (
	ImgName    = `<img src=x onerror=alert(1)>`
	ScriptName = `</script><script>alert(1)</script>`
	RouteName  = "GET /posts/:id"
)

// Hit is known traffic: N hits of series Name at T0+At.
type Hit struct {
	Name string
	At   time.Duration
	N    int
}

// KnownTraffic is what New records before the tests read it back.
var KnownTraffic = []Hit{
	{"hits", 0, 3},
	{"hits", 5 * time.Second, 1},
	{"hits", 20 * time.Second, 2},
	{"hits", 10*time.Minute + 2*time.Second, 4}, // the still-open bucket
	{RouteName, 5 * time.Second, 2},
	{RouteName, 5 * time.Minute, 5},
	{ImgName, 10 * time.Second, 1},
	{ScriptName, 15 * time.Second, 2},
}

// Fixture is a dashboard mounted under /dashboard on a net/http app whose
// every request pulsehttp counts, reading a real redis-server written by a
// real Recorder: what an app's users open in their browsers.
type Fixture struct {
	Srv    *redistest.Server
	Clock  *timeseries.ManualClock
	Rec    *timeseries.Recorder // flushes only when told (Flush, Record)
	Store  *timeseries.Store
	Ents   *Entities // nil with Options.NoEntities
	Server *httptest.Server
	Root   string // Server.URL + "/dashboard/"
	// Down makes the server drop every connection, as one that is
	// restarting would.
	Down atomic.Bool
}

// Options shapes a Fixture; the zero value is the full one.
type Options struct {
	// FlushInterval is the dashboard's Config.FlushInterval (0: the
	// recorder's own, which the fixture sets to an hour).
	FlushInterval time.Duration
	NoHealth      bool // no Config.Health
	NoEntities    bool // no Config.Entities
	NoTraffic     bool // KnownTraffic is not recorded
	// Title, Poll, Overview and Labels are the dashboard's Config.Title,
	// PollInterval, Overview and Labels.
	Title    string
	Poll     time.Duration
	Overview int
	Labels   func(ctx context.Context, kind string, ids []int64) (map[int64]string, error)
	// Alerts, when set, makes the dashboard's Config.Alerts once the
	// fixture's Redis, clock and recorder exist (an alert evaluator's
	// Handler, say).
	Alerts func(f *Fixture) http.Handler
	// Start, when set, is where the clock stands instead of Now:
	// durations expire by Redis's own clock, so a fixture recording them
	// needs a recent one.
	Start time.Time
}

// New starts a redis-server, a Recorder and the dashboard's app as o
// says, all stopped when t ends.
func New(t testing.TB, o Options) *Fixture {
	t.Helper()
	f := &Fixture{Srv: redistest.Start(t), Clock: timeseries.NewManualClock(T0)}
	var err error
	f.Rec, err = timeseries.NewRecorder(timeseries.Config{
		Pool: f.Srv.Pool(), Clock: f.Clock, FlushInterval: time.Hour, OnError: func(error) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), harness.Hang)
		defer cancel()
		_ = f.Rec.Close(ctx)
	})
	f.Clock.Advance(Now.Sub(f.Clock.Now()))
	if !o.Start.IsZero() {
		f.Clock.Advance(o.Start.Sub(f.Clock.Now()))
	}
	if !o.NoTraffic {
		f.Record(t, KnownTraffic...)
	}
	if f.Store, err = timeseries.NewStore(f.Srv.Pool(), timeseries.Schema{}, f.Clock); err != nil {
		t.Fatal(err)
	}
	f.serve(t, f.config(o))
	return f
}

// config is the dashboard's Config for o.
func (f *Fixture) config(o Options) dashboard.Config {
	cfg := dashboard.Config{Store: f.Store, Title: o.Title, PollInterval: o.Poll, Overview: o.Overview,
		Labels: o.Labels, FlushInterval: o.FlushInterval}
	if !o.NoHealth {
		cfg.Health = f.Rec
	}
	if o.Alerts != nil {
		cfg.Alerts = o.Alerts(f)
	}
	if !o.NoEntities {
		f.Ents = newEntities()
		cfg.Entities = f.Ents
	}
	return cfg
}

// serve mounts the dashboard of cfg beside an app page and starts the
// server, whose requests pulsehttp counts.
func (f *Fixture) serve(t testing.TB, cfg dashboard.Config) {
	t.Helper()
	h, err := dashboard.Handler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "app") })
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", h))
	mux.Handle("/dashboard", http.StripPrefix("/dashboard", h))
	app := pulsehttp.Hits(f.Rec)(mux)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.Down.Load() {
			panic(http.ErrAbortHandler) // closes the connection, unanswered
		}
		app.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Server.Close)
	f.Root = f.Server.URL + "/dashboard/"
}

// Record writes hits at their times, flushes them, and puts the clock
// back where it was.
func (f *Fixture) Record(t testing.TB, hits ...Hit) {
	t.Helper()
	back := f.Clock.Now()
	for _, h := range hits {
		c, err := f.Rec.Counter(h.Name)
		if err != nil {
			t.Fatal(err)
		}
		f.Clock.Advance(T0.Add(h.At).Sub(f.Clock.Now()))
		for range h.N {
			c.Inc()
		}
	}
	f.Clock.Advance(back.Sub(f.Clock.Now()))
	f.Flush(t)
}

// Flush writes what the Recorder holds to Redis, failing t on error.
func (f *Fixture) Flush(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), harness.Hang)
	defer cancel()
	if err := f.Rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// RecordFailing records route's traffic in every 5 s bucket from T0 to
// the open one at Now: total requests a bucket, failed of them answered
// 5xx (counted in its class series, as the middlewares count them).
func (f *Fixture) RecordFailing(t testing.TB, route string, total, failed int) {
	t.Helper()
	var hits []Hit
	for at := time.Duration(0); at <= Now.Sub(T0); at += 5 * time.Second {
		hits = append(hits, Hit{route, at, total}, Hit{route + " status:5xx", at, failed})
	}
	f.Record(t, hits...)
}
