package adapter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/race"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// testTracker returns a tracker configured as cfg over a Recorder on srv
// that flushes only when told (rc gives its config, Pool filled in),
// closed when the test ends.
func testTracker(t *testing.T, srv *redistest.Server, rc timeseries.Config, cfg config) (*tracker, *timeseries.Recorder) {
	t.Helper()
	rc.Pool = srv.Pool()
	if rc.FlushInterval == 0 {
		rc.FlushInterval = time.Hour
	}
	rec, err := timeseries.NewRecorder(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	cfg.Recorder = rec
	tr, err := newTracker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr, rec
}

// TestCachesAreBounded: route and app-named series caches stop growing at
// MaxCachedNames, so a RouteName hook returning raw paths cannot grow the
// middleware's memory without bound; past it, names still count.
func TestCachesAreBounded(t *testing.T) {
	race.SkipMeasurement(t)
	srv := redistest.Start(t)
	// One flush of thousands of series: more than the default 2 s on a
	// loaded machine.
	tr, rec := testTracker(t, srv, timeseries.Config{MaxNames: 3 * MaxCachedNames, FlushTimeout: 30 * time.Second}, config{Routes: true})
	const n = MaxCachedNames + 50
	for i := range n {
		tr.record(request{Method: "GET", Route: fmt.Sprintf("/raw/%d", i), Status: 200, Series: fmt.Sprintf("tenant-%d", i)})
	}
	if got := len(*tr.routes[methodIndex("GET")].Load()); got != MaxCachedNames {
		t.Errorf("GET route cache holds %d names, want %d", got, MaxCachedNames)
	}
	if got := len(*tr.named.Load()); got != MaxCachedNames {
		t.Errorf("named cache holds %d names, want %d", got, MaxCachedNames)
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := srv.HashSum("count:86400:GET /raw/" + fmt.Sprint(n-1)); got != 1 {
		t.Errorf("a route past the cache counted %d, want 1", got)
	}
}

// Per-route status classes count exactly, 404s under a matched route
// with the route and misses under "unmatched", and a class gets its
// series only once a request of it comes. Durations go in hits and the
// routes, not in the status series.
func TestRouteStatusCounts(t *testing.T) {
	srv := redistest.Start(t)
	tr, rec := testTracker(t, srv, timeseries.Config{}, config{Routes: true, StatusClasses: true})
	reqs := []struct {
		route  string
		status int
		n      int
	}{{"/posts/:id", 200, 5}, {"/posts/:id", 404, 3}, {"/posts/:id", 500, 2}, {"", 404, 4}, {"", 405, 1}}
	for _, r := range reqs {
		for range r.n {
			tr.record(request{Method: "GET", Route: r.route, Status: r.status, Duration: time.Millisecond})
		}
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"hits": 15, "GET /posts/:id": 10, "unmatched": 5,
		"GET /posts/:id status:2xx": 5, "GET /posts/:id status:4xx": 3, "GET /posts/:id status:5xx": 2,
		"unmatched status:4xx": 5, "status:2xx": 5, "status:4xx": 8, "status:5xx": 2,
	}
	for name, n := range want {
		if got := srv.HashSum("count:86400:" + name); got != n {
			t.Errorf("%s: %d, want %d", name, got, n)
		}
	}
	for _, absent := range []string{"GET /posts/:id status:3xx", "GET /posts/:id status:1xx", "unmatched status:2xx"} {
		if srv.Do("ZSCORE", "known:", "5:"+absent) != nil {
			t.Errorf("%s exists though no request had its class", absent)
		}
	}
	for name, timed := range map[string]bool{"hits": true, "GET /posts/:id": true, "unmatched": true, "status:4xx": false, "GET /posts/:id status:4xx": false} {
		keys, _ := redis.Strings(srv.Do("KEYS", "lat:{count:5:"+name+"}:*"), nil)
		if (len(keys) > 0) != timed {
			t.Errorf("%s: lat keys %v, want some: %v", name, keys, timed)
		}
	}
}

// Record allocates nothing once the names have been seen, durations and
// per-route status classes included.
func TestRecordDoesNotAllocate(t *testing.T) {
	srv := redistest.Start(t)
	tr, _ := testTracker(t, srv, timeseries.Config{}, config{Routes: true, StatusClasses: true})
	r := request{Method: "GET", Route: "/posts/:id", Status: 503, Series: "tenant-1", Duration: 3 * time.Millisecond}
	tr.record(r)
	if n := testing.AllocsPerRun(1000, func() { tr.record(r) }); n != 0 {
		t.Errorf("Record allocates %.1f times per call, want 0", n)
	}
}

// TestTrackerTimesOnlyWithDurations: a tracker over a Recorder with
// durations times requests on the monotonic clock; over one with
// durations off it reads no clock and every request takes 0, so turning
// durations off takes their clock reads off the request path too.
func TestTrackerTimesOnlyWithDurations(t *testing.T) {
	srv := redistest.Start(t)
	const pause = 5 * time.Millisecond
	for _, tc := range []struct {
		name string
		off  bool
	}{{"durations on", false}, {"durations off", true}} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := testTracker(t, srv, timeseries.Config{DisableDurations: tc.off}, config{})
			start := tr.Begin()
			time.Sleep(pause)
			got := tr.Elapsed(start)
			if tc.off && (start != 0 || got != 0) {
				t.Errorf("durations off: Begin %d, Elapsed %v; want 0 and 0, no clock read", start, got)
			}
			if !tc.off && (got < pause || got > time.Second) {
				t.Errorf("durations on: Elapsed %v over a %v sleep", got, pause)
			}
		})
	}
}

// Visits follows the Recorder: true unless it counts no visitors.
func TestTrackerVisits(t *testing.T) {
	srv := redistest.Start(t)
	for _, off := range []bool{false, true} {
		if tr, _ := testTracker(t, srv, timeseries.Config{DisableVisitors: off}, config{}); tr.visits() == off {
			t.Errorf("DisableVisitors %v: visits() = %v", off, tr.visits())
		}
	}
}
