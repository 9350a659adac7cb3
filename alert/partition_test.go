package alert

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tcpproxy"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
)

// beat is one recorder's heartbeat as a test writes it: times are
// seconds before the evaluation.
type beat struct {
	id            string
	at, flushedAt int // seconds ago
	pending       int64
	interval      time.Duration
	maxPending    time.Duration
	closed        bool
}

// TestInstancesHold: the evaluator evaluates whatever the other
// instances' heartbeats say, and holds resolves back while one may hold
// hits Redis lacks, through each state an instance's heartbeat passes:
// fresh, behind on its flushes (silent, or reporting failed flushes),
// silent past the grace with hits pending or none (stopped), past its
// MaxPendingAge, slow to flush by its own interval, closed, gone for
// longer than GoneAfter, and gone from Redis (the key evicted or
// deleted) while known. Heartbeats are written as recorders write them;
// nothing here expires in Redis.
func TestInstancesHold(t *testing.T) {
	t.Parallel()
	type step struct {
		beats    []beat
		evict    bool          // the heartbeats key is deleted before the evaluation
		later    time.Duration // the clock moves on before the evaluation
		hold     string        // in the reason of the hold; "" for none
		remained []string      // the instances whose heartbeats are left after it
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"fresh", []step{{beats: []beat{{id: "a", at: 1, flushedAt: 1}}, remained: []string{"a"}}}},
		{"silent, then flushed", []step{
			{beats: []beat{{id: "a", at: 20, flushedAt: 20, pending: 1047}}, remained: []string{"a"},
				hold: "instance web (pid 7, recorder a): its last good flush was 20s ago, and it was last heard of 20s ago, with 1047 hits pending"},
			{beats: []beat{{id: "a", at: 0, flushedAt: 0}}, later: time.Minute, remained: []string{"a"}},
		}},
		{"reporting failed flushes", []step{{beats: []beat{{id: "a", at: 1, flushedAt: 30}}, hold: "last good flush was 30s ago", remained: []string{"a"}}}},
		{"silent past the grace, nothing pending", []step{{beats: []beat{{id: "a", at: 40, flushedAt: 40}}, remained: []string{"a"}}}},
		{"silent past the grace, hits pending", []step{{beats: []beat{{id: "a", at: 40, flushedAt: 40, pending: 5, maxPending: time.Minute}}, remained: []string{"a"},
			hold: "instance web (pid 7, recorder a): it reported 5 hits pending 40s ago, which it keeps until 1m after its last good flush, 40s ago"}}},
		{"past its MaxPendingAge", []step{{beats: []beat{{id: "a", at: 61, flushedAt: 61, pending: 5, maxPending: time.Minute}}, remained: []string{"a"}}}},
		{"hits pending, its MaxPendingAge unknown", []step{{beats: []beat{{id: "a", at: 14 * 60, flushedAt: 14 * 60, pending: 5}}, remained: []string{"a"},
			hold: "it reported 5 hits pending 14m ago, which it keeps until 15m after"}}},
		{"slow by its own interval", []step{{beats: []beat{{id: "a", at: 20, flushedAt: 20, interval: 10 * time.Second}}, remained: []string{"a"}}}},
		{"closed", []step{{beats: []beat{{id: "a", at: 20, flushedAt: 20, closed: true}}, remained: []string{"a"}}}},
		{"closed long ago", []step{{beats: []beat{{id: "a", at: 16 * 60, flushedAt: 16 * 60, closed: true}}}}},
		{"gone", []step{{beats: []beat{{id: "a", at: 16 * 60, flushedAt: 16 * 60}, {id: "b", at: 1, flushedAt: 1}}, remained: []string{"b"}}}},
		{"evicted while alive", []step{
			{beats: []beat{{id: "a", at: 1, flushedAt: 1}}, remained: []string{"a"}},
			{evict: true, later: 10 * time.Second, hold: "instance a: its heartbeat is gone from Redis; its last good flush was 11s ago"},
			{later: 15 * time.Minute},
		}},
		{"evicted, the others back", []step{
			{beats: []beat{{id: "a", at: 1, flushedAt: 1}, {id: "b", at: 1, flushedAt: 1}}, remained: []string{"a", "b"}},
			{evict: true, later: 10 * time.Second, beats: []beat{{id: "b", at: 0, flushedAt: 0}}, hold: "instance a: its heartbeat is gone", remained: []string{"b"}},
		}},
	}
	srv := redistest.Start(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv.FlushAll()
			steadyTraffic(App, 0, 0).write(t, srv.Pool())
			clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
			e, err := New(Config{Pool: srv.Pool(), Clock: clock, Instance: "ev", Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App}}})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			for i, s := range c.steps {
				clock.Advance(s.later)
				if s.evict {
					srv.Do("DEL", timeseries.Schema{}.HeartbeatsKey())
				}
				writeBeats(t, srv, clock.Now(), s.beats)
				evals := e.Health().Evaluations
				e.tick(context.Background())
				h := e.Health()
				switch {
				case h.DataMissing || h.Evaluations != evals+1 || h.LastError != "":
					t.Errorf("step %d: not evaluated: %+v", i+1, h)
				case s.hold == "" && h.ResolvesHeld != "":
					t.Errorf("step %d: resolves held: %+v", i+1, h)
				case s.hold != "" && !strings.Contains(h.ResolvesHeld, s.hold):
					t.Errorf("step %d: %+v; want resolves held for %q", i+1, h, s.hold)
				}
				left, _ := redis.Strings(srv.Do("HKEYS", timeseries.Schema{}.HeartbeatsKey()), nil)
				slices.Sort(left)
				if strings.Join(left, ",") != strings.Join(s.remained, ",") {
					t.Errorf("step %d: heartbeats left of %v, want %v", i+1, left, s.remained)
				}
			}
		})
	}
}

// writeBeats stores beats as recorders publish them at now.
func writeBeats(t *testing.T, srv *redistest.Server, now time.Time, beats []beat) {
	t.Helper()
	for _, b := range beats {
		interval := b.interval
		if interval == 0 {
			interval = time.Second
		}
		v, err := json.Marshal(timeseries.Heartbeat{Host: "web", PID: 7, At: now.Add(-time.Duration(b.at) * time.Second),
			LastFlushOK: now.Add(-time.Duration(b.flushedAt) * time.Second), PendingHits: b.pending, FlushInterval: interval,
			MaxPendingAge: b.maxPending, Closed: b.closed})
		if err != nil {
			t.Fatal(err)
		}
		srv.Do("HSET", timeseries.Schema{}.HeartbeatsKey(), b.id, v)
	}
}

// TestRedisPausedHoldsForEveryInstance: Redis paused (SIGSTOP) fails
// every instance's flushes; once it resumes, the evaluator evaluates
// again but holds resolves back until every instance has flushed again,
// not only its own. The
// instances' clocks are their own, near the wall clock (the recorders'
// markers expire by Redis's), so one can lag behind the other.
func TestRedisPausedHoldsForEveryInstance(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := tcpproxy.Start(t, srv.Addr) // never cut: its pool's timeouts are short
	start := testnow.Now()
	clockA, clockB := timeseries.NewManualClock(start), timeseries.NewManualClock(start)
	var recs []*timeseries.Recorder
	for _, clock := range []*timeseries.ManualClock{clockA, clockB} {
		rec, err := timeseries.NewRecorder(timeseries.Config{Pool: proxy.Pool(), Clock: clock,
			FlushTimeout: 500 * time.Millisecond, OnError: func(error) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer closeRecorder(rec)
		recs = append(recs, rec)
	}
	recA, recB := recs[0], recs[1]
	e, err := New(Config{Pool: proxy.Pool(), Clock: clockA, Instance: "a", Recorder: recA,
		Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	flushAgain(t, clockA, recA)
	flushAgain(t, clockB, recB)
	e.tick(ctx)
	if h := e.Health(); h.DataMissing || h.Evaluations != 1 {
		t.Fatalf("before the pause: %+v", h)
	}

	srv.Pause()
	for _, c := range []struct {
		clock *timeseries.ManualClock
		rec   *timeseries.Recorder
	}{{clockA, recA}, {clockB, recB}} {
		hits, _ := c.rec.Counter(App)
		c.rec.Record(hits)
		c.clock.Advance(time.Second)
		waitFor(t, "a flush failing on the paused Redis", func() bool { return !c.rec.Health().RedisUp })
	}
	e.tick(ctx)
	if h := e.Health(); h.Evaluations != 1 || h.LastError == "" {
		t.Fatalf("while paused: %+v", h)
	}
	srv.Resume()
	clockA.Advance(10 * time.Second) // past a's backoff; b's clock stands
	flushAgain(t, clockA, recA)
	e.tick(ctx)
	if h := e.Health(); h.DataMissing || h.Evaluations != 2 || strings.Count(h.ResolvesHeld, "its last good flush was") != 1 {
		t.Fatalf("resumed, a flushed, b not yet: %+v; want resolves held for b", h)
	}
	clockB.Advance(clockA.Now().Sub(clockB.Now()))
	flushAgain(t, clockB, recB)
	e.tick(ctx)
	if h := e.Health(); h.DataMissing || h.ResolvesHeld != "" || h.Evaluations != 3 {
		t.Fatalf("both flushed: %+v", h)
	}
}
