package browsertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/entity"
	"github.com/pulse-dev/pulse/internal/redistest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// t0 starts a 5 s bucket (and a minute's, mid-hour).
var t0 = time.Unix(1700000000, 0)

// Names that would run script if a page ever put them into HTML or into
// a script element unescaped.
const (
	imgName    = `<img src=x onerror=alert(1)>`
	scriptName = `</script><script>alert(1)</script>`
	routeName  = "GET /posts/:id"
)

// hit is known traffic: n hits of name at t0+at.
type hit struct {
	name string
	at   time.Duration
	n    int
}

// knownTraffic is what the fixture records before the tests read it back.
// The clock then stands at t0+10m2s, inside the 5 s bucket t0+600.
var knownTraffic = []hit{
	{"hits", 0, 3},
	{"hits", 5 * time.Second, 1},
	{"hits", 20 * time.Second, 2},
	{"hits", 10*time.Minute + 2*time.Second, 4}, // the still-open bucket
	{routeName, 5 * time.Second, 2},
	{routeName, 5 * time.Minute, 5},
	{imgName, 10 * time.Second, 1},
	{scriptName, 15 * time.Second, 2},
}

var fixtureNow = t0.Add(10*time.Minute + 2*time.Second)

// fixture is a dashboard mounted under /dashboard on a net/http app whose
// every request pulsehttp counts, reading a real redis-server written by a
// real Recorder: what an app's users open in their browsers.
type fixture struct {
	srv    *redistest.Server
	clock  *timeseries.ManualClock
	rec    *timeseries.Recorder
	store  *timeseries.Store
	ents   *memEntities
	server *httptest.Server
	root   string // server URL + "/dashboard/"
	// down makes the server drop every connection, as one that is
	// restarting would.
	down atomic.Bool
}

type fixtureOptions struct {
	// flushInterval is the dashboard's Config.FlushInterval (0: the
	// recorder's own, which the fixture sets to an hour).
	flushInterval time.Duration
	noHealth      bool
	noEntities    bool
	noTraffic     bool
	title         string
	poll          time.Duration
	overview      int
	labels        func(ctx context.Context, kind string, ids []int64) (map[int64]string, error)
	// start, when set, is where the clock stands instead of fixtureNow:
	// durations expire by Redis's own clock, so a fixture recording them
	// needs a recent one.
	start time.Time
}

func newFixture(t testing.TB, o fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{srv: redistest.Start(t), clock: timeseries.NewManualClock(t0)}
	var err error
	f.rec, err = timeseries.NewRecorder(timeseries.Config{
		Pool: f.srv.Pool(), Clock: f.clock, FlushInterval: time.Hour, OnError: func(error) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = f.rec.Close(ctx)
	})
	f.clock.Advance(fixtureNow.Sub(f.clock.Now()))
	if !o.start.IsZero() {
		f.clock.Advance(o.start.Sub(f.clock.Now()))
	}
	if !o.noTraffic {
		f.record(t, knownTraffic...)
	}
	if f.store, err = timeseries.NewStore(f.srv.Pool(), timeseries.Schema{}, f.clock); err != nil {
		t.Fatal(err)
	}
	cfg := dashboard.Config{Store: f.store, Title: o.title, PollInterval: o.poll, Overview: o.overview, Labels: o.labels,
		FlushInterval: o.flushInterval}
	if !o.noHealth {
		cfg.Health = f.rec
	}
	if !o.noEntities {
		f.ents = newMemEntities()
		cfg.Entities = f.ents
	}
	h, err := dashboard.Handler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "app") })
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", h))
	mux.Handle("/dashboard", http.StripPrefix("/dashboard", h))
	app := pulsehttp.Hits(f.rec)(mux)
	f.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.down.Load() {
			panic(http.ErrAbortHandler) // closes the connection, unanswered
		}
		app.ServeHTTP(w, r)
	}))
	t.Cleanup(f.server.Close)
	f.root = f.server.URL + "/dashboard/"
	return f
}

// record writes hits at their times, flushes them, and puts the clock
// back where it was.
func (f *fixture) record(t testing.TB, hits ...hit) {
	t.Helper()
	back := f.clock.Now()
	for _, h := range hits {
		c, err := f.rec.Counter(h.name)
		if err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(t0.Add(h.at).Sub(f.clock.Now()))
		for range h.n {
			c.Inc()
		}
	}
	f.clock.Advance(back.Sub(f.clock.Now()))
	f.flush(t)
}

func (f *fixture) flush(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// response is what a test reads back from one request.
type response struct {
	status int
	header http.Header
	body   string
}

func do(t testing.TB, method, url string, header http.Header) response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func get(t testing.TB, url string) response { return do(t, http.MethodGet, url, nil) }

// memEntities is an in-memory Entities for this package's tests: the real
// entity counters are tested end to end in their own package.
type memEntities struct {
	mu     sync.Mutex
	kinds  []entity.KindInfo
	counts map[string]map[int64]entity.Counts
	broken bool // every read fails, as a database outage would
	panics bool // Top panics, as a bug would
}

func newMemEntities() *memEntities {
	m := &memEntities{
		kinds: []entity.KindInfo{
			{Name: "post", Fields: []string{"views", "replies", "likes", "favorites"}},
			{Name: "user", Fields: []string{"posts", "followers"}},
		},
		counts: map[string]map[int64]entity.Counts{"post": {}, "user": {}},
	}
	m.set("post", 7, entity.Counts{"views": 12, "likes": 3})
	m.set("post", 3, entity.Counts{"views": 40, "replies": 2})
	m.set("post", 9, entity.Counts{"views": 12, "favorites": 1})
	m.set("user", 1, entity.Counts{"followers": 5, "posts": 2})
	return m
}

func (m *memEntities) set(kind string, id int64, c entity.Counts) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[kind][id] = c
}

func (m *memEntities) setBroken(b bool) {
	m.mu.Lock()
	m.broken = b
	m.mu.Unlock()
}

func (m *memEntities) Kinds() []entity.KindInfo { return slices.Clone(m.kinds) }

func (m *memEntities) fields(kind string) ([]string, error) {
	for _, k := range m.kinds {
		if k.Name == kind {
			return k.Fields, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", entity.ErrUnknownKind, kind)
}

func (m *memEntities) Get(ctx context.Context, kind string, id int64) (entity.Counts, error) {
	out, err := m.BatchGet(ctx, kind, []int64{id})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (m *memEntities) BatchGet(_ context.Context, kind string, ids []int64) ([]entity.Counts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broken {
		return nil, errors.New("entity: database is down")
	}
	fields, err := m.fields(kind)
	if err != nil {
		return nil, err
	}
	out := make([]entity.Counts, len(ids))
	for i, id := range ids {
		c := entity.Counts{}
		for _, f := range fields {
			c[f] = m.counts[kind][id][f]
		}
		out[i] = c
	}
	return out, nil
}

func (m *memEntities) Top(_ context.Context, kind, field string, n int) ([]entity.Ranked, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.panics {
		panic("secret internal state 0xdeadbeef")
	}
	if m.broken {
		return nil, errors.New("entity: database is down")
	}
	fields, err := m.fields(kind)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(fields, field) {
		return nil, fmt.Errorf("%w: %q", entity.ErrUnknownField, field)
	}
	var out []entity.Ranked
	for id, c := range m.counts[kind] {
		if c[field] > 0 {
			out = append(out, entity.Ranked{ID: id, Count: c[field]})
		}
	}
	slices.SortFunc(out, func(a, b entity.Ranked) int {
		if a.Count != b.Count {
			return int(b.Count - a.Count)
		}
		return int(a.ID - b.ID)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}

type overviewBody struct {
	Precision int   `json:"precision"`
	From      int64 `json:"from"`
	To        int64 `json:"to"`
	Current   int64 `json:"current"`
	Now       int64 `json:"now"`
	Top       []struct {
		Name    string              `json:"name"`
		Total   int64               `json:"total"`
		Samples []timeseries.Sample `json:"samples"`
	} `json:"top"`
	Pinned []struct {
		Name    string              `json:"name"`
		Total   int64               `json:"total"`
		Samples []timeseries.Sample `json:"samples"`
	} `json:"pinned"`
	Totals []struct {
		Name  string `json:"name"`
		Total int64  `json:"total"`
	} `json:"totals"`
}

func getOverview(t *testing.T, u string) overviewBody {
	t.Helper()
	r := get(t, u)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var ov overviewBody
	if err := json.Unmarshal([]byte(r.body), &ov); err != nil {
		t.Fatal(err)
	}
	return ov
}
