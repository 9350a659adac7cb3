package alert

import (
	"context"
	"github.com/gomodule/redigo/redis"
	"math"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

// burnNow is a fixed instant on a 5 h boundary (so on every coarser
// boundary but the day's), far from the wall clock on purpose: the
// test's hashes never expire, so it does not matter when it runs.
const burnNow = int64(98180 * 18000)

func TestWindowSum(t *testing.T) {
	t.Parallel()
	samples := []timeseries.Sample{{Time: 0, Count: 60}, {Time: 60, Count: 60}, {Time: 120, Count: 30}}
	cases := []struct {
		name          string
		from, to, now int64
		want          float64
	}{
		{"whole buckets", 0, 120, 200, 120},
		{"cut oldest bucket", 30, 120, 200, 90},
		{"current bucket whole when it ends now", 60, 150, 150, 90},
		{"current bucket in part when the window ends before now", 60, 150, 180, 75},
		{"window before data", -100, 0, 200, 0},
		{"window after data", 180, 240, 240, 0},
	}
	for _, c := range cases {
		if got := windowSum(samples, 60, c.from, c.to, c.now); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPickPrecision(t *testing.T) {
	t.Parallel()
	ps := tracktest.DefaultPrecisions()
	for _, c := range []struct {
		w, back time.Duration
		want    int
	}{
		{5 * time.Minute, 0, 60},
		{30 * time.Minute, 0, 300},
		{time.Hour, 0, 300},
		{6 * time.Hour, 0, 3600},
		{72 * time.Hour, 0, 18000},
		{15 * time.Minute, 24 * time.Hour, 3600},      // a day back needs the hours' five days
		{15 * time.Minute, 7 * 24 * time.Hour, 18000}, // a week back the 5 h buckets' 25 days
		{300 * 24 * time.Hour, 0, 86400},              // beyond all: the coarsest
	} {
		if got := pickPrecision(ps, c.w, c.back, defaultMaxBuckets); got != c.want {
			t.Errorf("%v back %v: %d, want %d", c.w, c.back, got, c.want)
		}
	}
}

// steadyTraffic is 100 requests a minute for four days before burnNow,
// the last errMinutes minutes of which have errPerMin 5xx answers.
func steadyTraffic(name string, errMinutes int, errPerMin int64) traffic {
	tr := traffic{}
	for k := int64(1); k <= 4*24*60; k++ {
		t := burnNow - 60*k
		tr.add(name, t, 100)
		if k <= int64(errMinutes) {
			tr.add(errorSeries(name), t, errPerMin)
		}
	}
	return tr
}

// TestBurnRates checks every window of the default rule against sums and
// burn rates worked out by hand over steady traffic with an error burst.
func TestBurnRates(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	steadyTraffic(App, 10, 50).write(t, pool)
	rule := Rule{Name: "SLO", Kind: Availability, Series: App}.WithDefaults()
	now := time.Unix(burnNow, 0)

	// Each window: [now-w, now) at the precision pickPrecision gives; the
	// burst is 10 minutes of 50 errors in 100 requests.
	want := []struct {
		w             time.Duration
		total, errors float64
		burn          float64
	}{
		{5 * time.Minute, 500, 250, 500},            // 0.5 / 0.001
		{30 * time.Minute, 3000, 500, 500.0 / 3},    // (1/6) / 0.001
		{time.Hour, 6000, 500, 250.0 / 3},           // (1/12) / 0.001
		{6 * time.Hour, 36000, 500, 125.0 / 9},      // (1/72) / 0.001
		{72 * time.Hour, 432000, 500, 1000.0 / 864}, // 14 whole 5 h buckets and 0.4 of one
	}
	rp := readPlan{}
	for _, c := range want {
		rp.want(App, windowOf(now, c.w, 0, pickPrecision(tracktest.DefaultPrecisions(), c.w, 0, defaultMaxBuckets)))
		rp.want(errorSeries(App), windowOf(now, c.w, 0, pickPrecision(tracktest.DefaultPrecisions(), c.w, 0, defaultMaxBuckets)))
	}
	d, err := rp.read(context.Background(), newRouter(srv.Pool()), timeseries.Schema{Precisions: tracktest.DefaultPrecisions()}, burnNow, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range want {
		s := windowOf(now, c.w, 0, pickPrecision(tracktest.DefaultPrecisions(), c.w, 0, defaultMaxBuckets))
		total, errs := d.sum(App, s, burnNow), d.sum(errorSeries(App), s, burnNow)
		if math.Abs(total-c.total) > 1e-6 || math.Abs(errs-c.errors) > 1e-6 {
			t.Errorf("%v: %v requests %v errors, want %v and %v", c.w, total, errs, c.total, c.errors)
		}
		if burn := errs / total / 0.001; math.Abs(burn-c.burn) > 1e-6*c.burn {
			t.Errorf("%v: burn %v, want %v", c.w, burn, c.burn)
		}
	}

	obs := observeOnce(t, pool, []Rule{rule}, now, nil)
	// page: min(1 h, 5 m) = 83.3 > 14.4 and min(6 h, 30 m) = 13.9 > 6;
	// the first is further past its rate, so it is the value.
	// ticket: min(3 d, 6 h) = 1.157 > 1.
	checkObs(t, obs, "SLO\x00page\x00hits", true, 250.0/3, 14.4)
	checkObs(t, obs, "SLO\x00ticket\x00hits", true, 1000.0/864, 1)
}

// TestBurnRatesBelowRate: the same burst spread thin enough that only
// the short windows exceed their rates: nothing is breached, as the
// long windows guard against paging on a blip.
func TestBurnRatesBelowRate(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	// 2 minutes of 10 errors a minute: 5 m burns 40, 1 h burns 3.33,
	// 30 m 6.67 but 6 h 0.556, 3 d 0.046.
	steadyTraffic(App, 2, 10).write(t, pool)
	rule := Rule{Name: "SLO", Kind: Availability, Series: App}.WithDefaults()
	obs := observeOnce(t, pool, []Rule{rule}, time.Unix(burnNow, 0), nil)
	checkObs(t, obs, "SLO\x00page\x00hits", false, 20.0/6, 14.4)
	checkObs(t, obs, "SLO\x00ticket\x00hits", false, 20.0/432, 1)
}

// TestBurnRatesPartialBuckets moves now 30 s into a minute that has its
// own traffic: the oldest minute of the 5 m window counts half, the
// current one whole.
func TestBurnRatesPartialBuckets(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	tr := steadyTraffic(App, 10, 50)
	tr.add(App, burnNow, 50)
	tr.add(errorSeries(App), burnNow, 50)
	tr.write(t, pool)
	now := time.Unix(burnNow+30, 0)
	s := windowOf(now, 5*time.Minute, 0, 60)
	rp := readPlan{}
	rp.want(App, s)
	rp.want(errorSeries(App), s)
	d, err := rp.read(context.Background(), newRouter(srv.Pool()), timeseries.Schema{Precisions: tracktest.DefaultPrecisions()}, now.Unix(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 4 whole minutes (400, 200), half of the fifth (50, 25), the
	// current minute so far (50, 50).
	if total, errs := d.sum(App, s, now.Unix()), d.sum(errorSeries(App), s, now.Unix()); total != 500 || errs != 275 {
		t.Errorf("%v requests %v errors, want 500 and 275", total, errs)
	}
}

func TestRouteTemplate(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	tr := steadyTraffic("GET /posts/:id", 10, 50)
	for k, v := range steadyTraffic("GET /users/:id", 0, 0) {
		tr[k] = v
	}
	tr.add("GET /users/:id status:4xx", burnNow-60, 7) // a class series is not a route
	tr.write(t, pool)
	rule := Rule{Name: "RouteSLO", Kind: Availability, Series: EveryRoute}.WithDefaults()
	obs := observeOnce(t, pool, []Rule{rule}, time.Unix(burnNow, 0), nil)
	if len(obs) != 4 {
		t.Fatalf("%d observations, want 2 routes × 2 severities: %+v", len(obs), obs)
	}
	o := checkObs(t, obs, "RouteSLO\x00page\x00GET /posts/:id", true, 250.0/3, 14.4)
	if o.Labels["route"] != "GET /posts/:id" || o.Labels["alertname"] != "RouteSLO" || o.Labels["severity"] != "page" {
		t.Errorf("labels %v", o.Labels)
	}
	checkObs(t, obs, "RouteSLO\x00page\x00GET /users/:id", false, 0, 14.4)
}

// observeOnce plans, reads (counts and durations) and observes rules
// at now.
func observeOnce(t *testing.T, pool *redis.Pool, rules []Rule, now time.Time, det Detector) map[string]observation {
	t.Helper()
	st, err := timeseries.NewStore(pool, timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := st.Series(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	since, err := st.SlowSince(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rp, dp := readPlan{}, durationPlan{}
	in := planInput{now: now, routes: routesOf(infos), slowSince: since, precisions: tracktest.DefaultPrecisions(), maxBuckets: defaultMaxBuckets}
	obs := append(plan(rules, in, rp, det), planLatencies(rules, in, rp, dp)...)
	d, err := rp.read(context.Background(), newRouter(pool), timeseries.Schema{Precisions: tracktest.DefaultPrecisions()}, now.Unix(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := dp.read(context.Background(), st, now.Unix()); err != nil {
		t.Fatal(err)
	}
	out := map[string]observation{}
	for _, f := range obs {
		for _, o := range f(context.Background(), d) {
			out[o.Key] = o
		}
	}
	return out
}

func checkObs(t *testing.T, obs map[string]observation, key string, breached bool, value, threshold float64) observation {
	t.Helper()
	o, ok := obs[key]
	if !ok {
		t.Fatalf("no observation %q among %d", key, len(obs))
	}
	if o.Breached != breached || math.Abs(o.Value-value) > 1e-6*math.Max(1, value) || o.Threshold != threshold {
		t.Errorf("%q: breached %v value %v threshold %v, want %v %v %v", key, o.Breached, o.Value, o.Threshold, breached, value, threshold)
	}
	return o
}
