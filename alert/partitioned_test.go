package alert

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/amtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tcpproxy"
	"github.com/pulse-dev/pulse/timeseries"
)

// instance is one app instance of TestPartitionedInstance: a recorder
// serving traffic, a share of it 5xx, and an evaluator beside it.
type instance struct {
	rec    *timeseries.Recorder
	ev     *Evaluator
	errors atomic.Bool // half the requests answer 5xx while set
}

// serve records a request every 10 ms until ctx ends.
func (in *instance) serve(ctx context.Context) {
	hits, _ := in.rec.Counter(App)
	errs, _ := in.rec.Counter("status:5xx")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if in.errors.Load() && n%2 == 0 {
			in.rec.Record(hits, errs)
		} else {
			in.rec.Record(hits)
		}
	}
}

// partitionSLO fires when 10 % of the budget of a 99 % SLO burns over
// 20 s and 5 s: windows short enough for a test, read at 5 s buckets.
var partitionSLO = Rule{Name: "SLO", Kind: Availability, Series: App, Target: 99,
	Windows: []Window{{Long: Duration(20 * time.Second), Short: Duration(5 * time.Second), Burn: 10, Severity: "page"}}}

// startInstance starts an instance whose recorder and evaluator reach
// Redis through pool.
func startInstance(t *testing.T, ctx context.Context, pool *redis.Pool, name, am string) *instance {
	return startInstanceWith(t, ctx, pool, name, am, 0)
}

// startInstanceWith starts an instance whose recorder keeps the hits it
// cannot write for maxPending (0: the default).
func startInstanceWith(t *testing.T, ctx context.Context, pool *redis.Pool, name, am string, maxPending time.Duration) *instance {
	t.Helper()
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, FlushTimeout: 500 * time.Millisecond, MaxPendingAge: maxPending, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeRecorder(rec) })
	ev, err := New(Config{Pool: pool, Recorder: rec, Instance: name, Rules: []Rule{partitionSLO},
		Interval: 500 * time.Millisecond, ResendEvery: time.Second,
		Receivers:  []Receiver{{Name: "am", Kind: ToAlertmanager, URL: am}},
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{rec: rec, ev: ev}
	go ev.Run(ctx)
	t.Cleanup(func() { ev.Close(context.Background()) })
	go in.serve(ctx)
	return in
}

// pendingReported says whether instance id's heartbeat in Redis reports
// hits pending, as a busy recorder's often does (those recorded during
// its flush).
func pendingReported(srv *redistest.Server, id string) bool {
	v, err := redis.Bytes(srv.Do("HGET", timeseries.Schema{}.HeartbeatsKey(), id), nil)
	var hb timeseries.Heartbeat
	return err == nil && json.Unmarshal(v, &hb) == nil && hb.PendingHits > 0
}

// cutPending cuts instance id off Redis once the last heartbeat it got
// through reports hits pending, so that it is known to hold hits. The
// heartbeat is read after the cut: one read before could be followed by
// another, with none pending, before the cut lands.
func cutPending(t *testing.T, srv *redistest.Server, proxy *tcpproxy.Proxy, id string) {
	t.Helper()
	waitWithin(t, "a cut after a heartbeat of "+id+" with hits pending", 2*time.Minute, func() bool {
		if !pendingReported(srv, id) {
			return false
		}
		proxy.Cut()
		time.Sleep(200 * time.Millisecond) // a write the proxy passed before the cut lands
		if pendingReported(srv, id) {
			return true
		}
		proxy.Restore()
		return false
	})
}

// heartbeatIDs are the recorders publishing heartbeats.
func heartbeatIDs(t *testing.T, srv *redistest.Server) []string {
	t.Helper()
	ids, _ := redis.Strings(srv.Do("HKEYS", timeseries.Schema{}.HeartbeatsKey()), nil)
	return ids
}

// newHeartbeat waits for a recorder not among before to publish one, and
// names it.
func newHeartbeat(t *testing.T, srv *redistest.Server, before []string) string {
	t.Helper()
	var id string
	waitFor(t, "a new recorder's heartbeat", func() bool {
		for _, x := range heartbeatIDs(t, srv) {
			if !slices.Contains(before, x) {
				id = x
				return true
			}
		}
		return false
	})
	return id
}

// resolveHeld is the reason a's handler gives for holding the SLO's
// resolve, "" for none.
func resolveHeld(t *testing.T, e *Evaluator) string {
	for _, r := range answer(t, e).Rules {
		for _, a := range r.Alerts {
			if a.ResolveHeld != "" {
				return a.ResolveHeld
			}
		}
	}
	return ""
}

// TestPartitionedInstance: two instances of an app on one Redis, each
// with its recorder and evaluator, both serving half their requests 5xx:
// the SLO fires. Then instance b, just after reporting hits pending,
// loses Redis (its connections go through a proxy the test cuts) for
// 50 s, longer than the SLO's long window and than the grace a silent
// instance gets, while it keeps serving 5xx and a stops failing. Its
// hits wait in its memory; a, the evaluator, goes on evaluating but
// holds the resolve back, and says so in its handler, including after
// the heartbeats' key is deleted midway (by b's last heartbeat it read),
// and keeps Alertmanager from letting the alert lapse. Once b flushes
// its backlog the alert goes on firing; once b stops failing it
// resolves. A real Alertmanager's webhook sees one firing and one
// resolved notification: no false resolve, no second page. Real clock:
// Alertmanager keeps it.
func TestPartitionedInstance(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := tcpproxy.Start(t, srv.Addr)
	h := newHook(t)
	am := amtest.Start(t, h.srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	a := startInstance(t, ctx, srv.Pool(), "a", am.URL())
	waitFor(t, "a to take the lease", func() bool { return a.ev.Health().Leader })
	// a's own heartbeat must be in before b starts, or b's would be taken
	// for it.
	var before []string
	waitFor(t, "a's heartbeat", func() bool { before = heartbeatIDs(t, srv); return len(before) == 1 })
	b := startInstance(t, ctx, proxy.Pool(), "b", am.URL())
	bID := newHeartbeat(t, srv, before)
	a.errors.Store(true)
	b.errors.Store(true)
	waitFor(t, "the SLO firing at Alertmanager's webhook", func() bool { return h.count("firing", "SLO", "page") == 1 })

	cutPending(t, srv, proxy, bID)
	a.errors.Store(false)
	cut := time.Now()
	evals := a.ev.Health().Evaluations
	var evicted time.Time
	seen := map[string]bool{} // the reasons a's handler gave for holding the resolve
	for time.Since(cut) < 50*time.Second {
		if evicted.IsZero() && time.Since(cut) > 40*time.Second {
			srv.Do("DEL", timeseries.Schema{}.HeartbeatsKey()) // as an eviction would
			evicted = time.Now()
		}
		if n := h.count("resolved", "SLO", "page"); n != 0 {
			hb := srv.Do("HGET", timeseries.Schema{}.HeartbeatsKey(), bID)
			t.Fatalf("%v into the cut: %d resolved notifications; a's health %+v; b's heartbeat %q", time.Since(cut).Round(time.Second), n, a.ev.Health(), hb)
		}
		why := resolveHeld(t, a.ev)
		for _, reason := range []string{"it was last heard of", "it reported", "its heartbeat is gone from Redis"} {
			if strings.Contains(why, "instance") && strings.Contains(why, reason) {
				seen[reason] = true
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := a.ev.Health().Evaluations - evals; n < 20 {
		t.Errorf("a evaluated %d times in the 50 s cut, want it to go on evaluating", n)
	}
	for _, reason := range []string{"it was last heard of", "it reported", "its heartbeat is gone from Redis"} {
		if !seen[reason] {
			t.Errorf("a's handler never held the resolve with %q", reason)
		}
	}
	proxy.Restore()
	restored := time.Now()
	// b retries on its backoff, at most 30 s after a failure.
	waitWithin(t, "b's backlog to land", 45*time.Second, func() bool { return a.ev.Health().ResolvesHeld == "" && resolveHeld(t, a.ev) == "" })
	t.Logf("cut for %v; a held no resolve %v after the cut ended", restored.Sub(cut).Round(time.Second), time.Since(restored).Round(time.Second))
	time.Sleep(3 * time.Second) // evaluations with b's backlog in
	if n, m := h.count("firing", "SLO", "page"), h.count("resolved", "SLO", "page"); n != 1 || m != 0 {
		t.Fatalf("after b's backlog landed: %d firing and %d resolved notifications, want the first firing alone", n, m)
	}

	b.errors.Store(false)
	waitWithin(t, "the SLO resolved", 45*time.Second, func() bool { return h.count("resolved", "SLO", "page") == 1 })
	time.Sleep(2 * time.Second) // two of Alertmanager's group intervals
	if n, m := h.count("firing", "SLO", "page"), h.count("resolved", "SLO", "page"); n != 1 || m != 1 {
		t.Fatalf("%d firing and %d resolved notifications, want one each", n, m)
	}
}
