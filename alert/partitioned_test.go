package alert

import (
	"context"
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
	t.Helper()
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, FlushTimeout: 500 * time.Millisecond, OnError: func(error) {}})
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

// TestPartitionedInstance: two instances of an app on one Redis, each
// with its recorder and evaluator, both serving half their requests 5xx:
// the SLO fires. Then instance b loses Redis (its connections go through
// a proxy the test cuts) for 25 s, longer than the SLO's long window,
// while it keeps serving 5xx and a stops failing. Its hits wait in its
// memory; a, the evaluator, seeing b's heartbeat go stale, holds the
// alert, including after the heartbeats' key is deleted midway, and
// keeps Alertmanager from letting it lapse. Once b flushes its backlog
// the alert goes on firing; once b stops failing it resolves. A real
// Alertmanager's webhook sees one firing and one resolved notification:
// no false resolve, no second page. Real clock: Alertmanager keeps it.
func TestPartitionedInstance(t *testing.T) {
	srv := redistest.Start(t)
	proxy := tcpproxy.Start(t, srv.Addr)
	h := newHook(t)
	am := amtest.Start(t, h.srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	a := startInstance(t, ctx, srv.Pool(), "a", am.URL())
	waitFor(t, "a to take the lease", func() bool { return a.ev.Health().Leader })
	b := startInstance(t, ctx, proxy.Pool(), "b", am.URL())
	a.errors.Store(true)
	b.errors.Store(true)
	waitFor(t, "the SLO firing at Alertmanager's webhook", func() bool { return h.count("firing", "SLO", "page") == 1 })

	proxy.Cut()
	a.errors.Store(false)
	cut := time.Now()
	var evicted time.Time
	unheld := false
	seen := map[string]bool{} // the reasons a was seen holding for
	// why a holds: b's stale heartbeat, then, once a has evaluated
	// after the key went, b's vanished one.
	why := func() string {
		switch {
		case evicted.IsZero():
			return "its last good flush was"
		case time.Since(evicted) > 4*time.Second:
			return "its heartbeat is gone from Redis"
		}
		return "instance"
	}
	for time.Since(cut) < 25*time.Second {
		if evicted.IsZero() && time.Since(cut) > 12*time.Second {
			srv.Do("DEL", timeseries.Schema{}.HeartbeatsKey()) // as an eviction would
			evicted = time.Now()
		}
		if n := h.count("resolved", "SLO", "page"); n != 0 {
			t.Fatalf("%v into the cut: %d resolved notifications; a's health %+v", time.Since(cut).Round(time.Second), n, a.ev.Health())
		}
		// b is stale 3 s into the cut; a sees it at its next evaluation.
		// a's own recorder missing a flush on a loaded machine holds it
		// too, for as long as it lasts; b's absence must be seen as well.
		if hl := a.ev.Health(); time.Since(cut) > 8*time.Second {
			own := strings.Contains(hl.LastError, "the recorder's latest flush failed")
			if !unheld && (!hl.DataMissing || !(own || strings.Contains(hl.LastError, why()))) {
				t.Errorf("%v into the cut, a evaluates without b: %+v", time.Since(cut).Round(time.Second), hl)
				unheld = true
			}
			if hl.DataMissing && strings.Contains(hl.LastError, why()) {
				seen[why()] = true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}

	for _, reason := range []string{"its last good flush was", "its heartbeat is gone from Redis"} {
		if !seen[reason] {
			t.Errorf("a never held for b's absence with %q", reason)
		}
	}
	proxy.Restore()
	restored := time.Now()
	// b retries on its backoff, at most 30 s after a failure.
	waitWithin(t, "b's backlog to land and a to evaluate again", 45*time.Second, func() bool { return !a.ev.Health().DataMissing })
	t.Logf("cut for %v; a evaluated again %v after the cut ended", restored.Sub(cut).Round(time.Second), time.Since(restored).Round(time.Second))
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
