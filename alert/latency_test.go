package alert

import (
	"context"
	"maps"
	"math"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

// defaultMapping bins durations as a recorder with the default accuracy
// and range does.
var defaultMapping = func() *timeseries.DurationMapping {
	m, err := timeseries.NewDurationMapping(0, 0, 0)
	if err != nil {
		panic(err)
	}
	return m
}()

// timings are request durations as the recorder writes them, at every
// precision of the default schema an evaluation reads (from 1 min), in
// hashes that never expire so that a test's clock may sit anywhere.
type timings map[latBucket]*timeseries.Histogram

type latBucket struct {
	name      string
	precision int
	start     int64
}

func (tm timings) add(name string, t int64, d time.Duration, n int) {
	for _, p := range tracktest.DefaultPrecisions()[1:] {
		for range n {
			tm.addAt(name, p, t, d)
		}
	}
}

// addAt counts d once at time t in name's bucket of precision p.
func (tm timings) addAt(name string, p int, t int64, d time.Duration) {
	b := latBucket{name, p, timeseries.BucketStart(t, p)}
	h := tm[b]
	if h == nil {
		h = timeseries.NewHistogram(defaultMapping)
		tm[b] = h
	}
	h.Add(d)
}

// hashes are the lat keys' fields under the schema prefix.
func (tm timings) hashes(prefix string) map[string]map[string]int64 {
	out := make(map[string]map[string]int64, len(tm))
	for b, h := range tm {
		key, _ := timeseries.Schema{Prefix: prefix}.DurationKey(b.precision, b.name, b.start)
		fields := map[string]int64{}
		for _, f := range h.Fields() {
			fields[f.Name] = f.Value
		}
		out[key] = fields
	}
	return out
}

func (tm timings) write(t testing.TB, pool *redis.Pool) {
	t.Helper()
	writeHashes(t, pool, tm.hashes(""), false)
}

// slowBurst is 100 requests a minute for four days before burnNow, each
// taking 100 ms, but 2 s in the last slowMinutes minutes.
func slowBurst(name string, slowMinutes int) timings {
	tm := timings{}
	for k := int64(1); k <= 4*24*60; k++ {
		d := 100 * time.Millisecond
		if k <= int64(slowMinutes) {
			d = 2 * time.Second
		}
		tm.add(name, burnNow-60*k, d, 100)
	}
	return tm
}

// TestLatencyBurnRates checks every window of a default latency rule
// (99 % within 500 ms) against counts and burn rates worked out by hand
// over steady traffic with a 10-minute burst of slow requests.
func TestLatencyBurnRates(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	slowBurst(App, 10).write(t, pool)
	rule := Rule{Name: "Lat", Kind: Latency, Series: App, Threshold: Duration(500 * time.Millisecond)}.WithDefaults()
	now := time.Unix(burnNow, 0)
	st, err := timeseries.NewStore(pool, timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The budget is 1 %; the burst is 1000 slow requests.
	want := []struct {
		w         time.Duration
		all, slow float64
		burn      float64
	}{
		{5 * time.Minute, 500, 500, 100},            // 1 / 0.01
		{30 * time.Minute, 3000, 1000, 100.0 / 3},   // (1/3) / 0.01
		{time.Hour, 6000, 1000, 50.0 / 3},           // (1/6) / 0.01
		{6 * time.Hour, 36000, 1000, 25.0 / 9},      // (1/36) / 0.01
		{72 * time.Hour, 432000, 1000, 100.0 / 432}, // (1/432) / 0.01
	}
	dp := durationPlan{}
	spanOf := func(w time.Duration) span {
		return windowOf(now, w, 0, pickPrecision(tracktest.DefaultPrecisions(), w, 0, defaultMaxBuckets))
	}
	for _, c := range want {
		dp.want(App, spanOf(c.w))
	}
	if err := dp.read(context.Background(), st, burnNow); err != nil {
		t.Fatal(err)
	}
	for _, c := range want {
		slow, all, ok := dp.slowAndAll(App, spanOf(c.w), rule.Threshold.Std(), burnNow)
		if !ok || math.Abs(all-c.all) > 1e-6 || math.Abs(slow-c.slow) > 1e-6 {
			t.Errorf("%v: %v requests %v slow (read %v), want %v and %v", c.w, all, slow, ok, c.all, c.slow)
		}
		if burn := slow / all / 0.01; math.Abs(burn-c.burn) > 1e-6*c.burn {
			t.Errorf("%v: burn %v, want %v", c.w, burn, c.burn)
		}
	}

	obs := observeOnce(t, pool, []Rule{rule}, now, nil)
	// page: min(1 h, 5 m) = 16.7 > 14.4, while min(6 h, 30 m) = 2.78 < 6;
	// ticket: min(3 d, 6 h) = 0.23 < 1.
	o := checkObs(t, obs, "Lat\x00page\x00hits", true, 50.0/3, 14.4)
	checkObs(t, obs, "Lat\x00ticket\x00hits", false, 100.0/432, 1)
	if got := o.Annotations["latency_threshold"]; got != "500ms" {
		t.Errorf("latency_threshold %q, want 500ms: a power of two seconds is a bin edge", got)
	}
	if o.Labels["alertname"] != "Lat" || o.Labels["severity"] != "page" {
		t.Errorf("labels %v", o.Labels)
	}

	// Every route: the same burst on one route, none on the other.
	srv.FlushAll()
	tm := slowBurst("GET /posts/:id", 10)
	for k, v := range slowBurst("GET /users/:id", 0) {
		tm[k] = v
	}
	tm.write(t, pool)
	tr := steadyTraffic("GET /posts/:id", 0, 0) // the routes known
	for k, v := range steadyTraffic("GET /users/:id", 0, 0) {
		tr[k] = v
	}
	tr.write(t, pool)
	every := Rule{Name: "RouteLat", Kind: Latency, Series: EveryRoute, Threshold: Duration(500 * time.Millisecond)}.WithDefaults()
	obs = observeOnce(t, pool, []Rule{every}, now, nil)
	if len(obs) != 4 {
		t.Fatalf("%d observations, want 2 routes × 2 severities", len(obs))
	}
	checkObs(t, obs, "RouteLat\x00page\x00GET /posts/:id", true, 50.0/3, 14.4)
	checkObs(t, obs, "RouteLat\x00page\x00GET /users/:id", false, 0, 14.4)
}

// TestThresholdEdge: a threshold inside a bin is taken at the nearer of
// the bin's edges, by ratio, which is within half a bin of it.
func TestThresholdEdge(t *testing.T) {
	t.Parallel()
	m := defaultMapping
	h := timeseries.NewHistogram(m)
	for _, d := range []time.Duration{290, 298, 305, 330} {
		h.Add(d * time.Millisecond)
	}
	h.Add(time.Microsecond) // underflow
	h.Add(time.Hour)        // overflow
	for _, c := range []struct {
		threshold time.Duration
		edge      float64 // seconds
		slow      uint64
	}{
		{500 * time.Millisecond, 0.5, 1},                  // an edge itself
		{300 * time.Millisecond, math.Pow(2, -14.0/8), 4}, // 297.3 ms: nearer the lower edge of (297.3, 324.2]
		{320 * time.Millisecond, math.Pow(2, -13.0/8), 2}, // 324.2 ms: nearer the upper
		{time.Nanosecond, m.ZeroThreshold() / 1e9, 5},     // below the range: all but the underflow
		{2 * time.Hour, m.Upper(func() int { _, hi := m.Bins(); return hi }()) / 1e9, 1},
	} {
		_, edge := thresholdEdge(m, c.threshold)
		if math.Abs(edge.Seconds()-c.edge) > 1e-9 {
			t.Errorf("%v: edge %v, want %vs", c.threshold, edge, c.edge)
		}
		if got := slowCount(h, c.threshold); got != c.slow {
			t.Errorf("%v: %d slow, want %d", c.threshold, got, c.slow)
		}
	}
	// Half a bin at scale 3 is a ratio of 2^(1/16), under the 5 % accuracy.
	half := math.Pow(2, 1.0/16)
	for d := time.Millisecond; d < time.Minute; d = d * 101 / 100 {
		_, edge := thresholdEdge(m, d)
		if r := float64(edge) / float64(d); r > half*(1+1e-9) || r < 1/half*(1-1e-9) {
			t.Fatalf("%v: edge %v, a ratio of %v", d, edge, r)
		}
	}
}

// TestLatencyFiresAndResolves: an evaluator on a manual clock takes a
// latency rule with for 2m through pending and firing, and resolves it
// once two hours of fast requests follow; the webhook gets one firing
// and one resolved notification.
func TestLatencyFiresAndResolves(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	slowBurst(App, 10).write(t, pool)
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	h := newHook(t)
	e, err := New(Config{Pool: pool, Clock: clock, Instance: "a",
		Rules:      []Rule{{Name: "Lat", Kind: Latency, Series: App, Threshold: Duration(500 * time.Millisecond), For: Duration(2 * time.Minute)}},
		Receivers:  []Receiver{{Name: "team", Kind: ToWebhook, URL: h.srv.URL}},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	ctx := context.Background()
	state := func() State {
		e.mu.Lock()
		defer e.mu.Unlock()
		if s := e.mem.states["Lat\x00page\x00hits"]; s != nil {
			return s.State
		}
		return ""
	}

	e.tick(ctx)
	if s, h := state(), e.Health(); s != Pending || h.LastError != "" {
		t.Fatalf("at the burst's end: %s (%s), want pending", s, h.LastError)
	}
	clock.Advance(2 * time.Minute)
	e.tick(ctx)
	if s := state(); s != Firing {
		t.Fatalf("2 min on: %s, want firing", s)
	}
	idle(t, e)
	if n := h.count("firing", "Lat", "page"); n != 1 {
		t.Fatalf("%d firing notifications, want 1", n)
	}

	clean := timings{}
	for k := int64(0); k < 120; k++ {
		clean.add(App, burnNow+60*k, 100*time.Millisecond, 100)
	}
	clean.write(t, pool)
	clock.Advance(2*time.Hour - 2*time.Minute)
	e.tick(ctx)
	if s := state(); s != Resolved {
		t.Fatalf("after two clean hours: %s, want resolved", s)
	}
	idle(t, e)
	if n, m := h.count("resolved", "Lat", "page"), h.count("firing", "Lat", "ticket"); n != 1 || m != 0 {
		t.Fatalf("%d resolved page and %d firing ticket notifications, want 1 and 0", n, m)
	}
}

// appRecorder is a recorder configured by cfg, closed when the test
// ends, and its counter of the app's hits.
func appRecorder(t *testing.T, cfg timeseries.Config) (*timeseries.Recorder, *timeseries.Counter) {
	t.Helper()
	rec, err := timeseries.NewRecorder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeRecorder(rec) })
	hits, err := rec.Counter(App)
	if err != nil {
		t.Fatal(err)
	}
	return rec, hits
}

// flushAndTick flushes rec, runs one evaluation of rules with rec as the
// recorder, and returns the states it left.
func flushAndTick(t *testing.T, rec *timeseries.Recorder, pool *redis.Pool, clock timeseries.Clock, rules []Rule) map[string]*Status {
	t.Helper()
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Pool: pool, Clock: clock, Instance: "a", Recorder: rec, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	e.tick(context.Background())
	if h := e.Health(); h.LastError != "" || h.DataMissing {
		t.Fatalf("%+v", h)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.mem.states)
}

// TestLatencyThroughRecorder: requests recorded by a recorder at 1 %
// accuracy are read by that recorder's bins when it is Config.Recorder:
// half the requests are slow, and the 300 ms threshold is taken at the
// edge of the 1 % bins (2^(-111/64) s), not of the default ones
// (297.3 ms). The clock starts at the wall clock's time, since the
// recorder's duration keys expire by Redis's clock.
func TestLatencyThroughRecorder(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	clock := timeseries.NewManualClock(time.Unix(testnow.Now().Unix()/60*60, 0))
	rec, hits := appRecorder(t, timeseries.Config{Pool: pool, Clock: clock, FlushInterval: time.Hour, DurationAccuracy: 0.01})
	for i := range 200 {
		d := 100 * time.Millisecond
		if i%2 == 0 {
			d = 2 * time.Second
		}
		rec.RecordRequest(timeseries.Request{Duration: d, Timed: [timeseries.MaxTimed]*timeseries.Counter{hits}})
	}
	clock.Advance(30 * time.Second)
	states := flushAndTick(t, rec, pool, clock, []Rule{{Name: "Lat", Kind: Latency, Series: App, Threshold: Duration(300 * time.Millisecond),
		Windows: []Window{{Long: Duration(5 * time.Minute), Short: Duration(time.Minute), Burn: 2, Severity: "page"}}}})
	s := states["Lat\x00page\x00hits"]
	if s == nil || s.State != Firing || math.Abs(s.Value-50) > 1e-9 {
		t.Fatalf("%+v: want firing at burn 50 (half slow, budget 1 %%)", s)
	}
	want := time.Duration(math.Round(1e9 * math.Pow(2, -111.0/64))).String()
	if got := s.Annotations["latency_threshold"]; got != want {
		t.Errorf("latency_threshold %q, want %q", got, want)
	}
}

// TestLatencyWithoutDurations: a recorder that keeps no durations leaves
// a latency alert held (stale), not inactive, and the other rules work.
func TestLatencyWithoutDurations(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	clock := timeseries.NewManualClock(time.Unix(testnow.Now().Unix()/60*60, 0))
	rec, hits := appRecorder(t, timeseries.Config{Pool: pool, Clock: clock, FlushInterval: time.Hour, DisableDurations: true})
	rec.Record(hits)
	states := flushAndTick(t, rec, pool, clock, []Rule{
		{Name: "Lat", Kind: Latency, Series: App, Threshold: Duration(time.Second)},
		{Name: "SLO", Kind: Availability, Series: App},
	})
	if s := states["Lat\x00page\x00hits"]; s == nil || !s.Stale || s.State != "" {
		t.Errorf("latency alert %+v: want held, stale", s)
	}
	if s := states["SLO\x00page\x00hits"]; s == nil || s.Stale || s.State != Inactive {
		t.Errorf("availability alert %+v: want inactive", s)
	}
}
