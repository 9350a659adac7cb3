package timeseries_test

import (
	"context"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tcpproxy"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
)

// cutOff is a recorder reaching srv through a proxy the test cuts, on a
// clock near the wall clock (the recorder's markers expire by Redis's),
// and a store reading srv directly.
func cutOff(t *testing.T) (*timeseries.Recorder, *tcpproxy.Proxy, *timeseries.ManualClock, *timeseries.Store) {
	t.Helper()
	srv := redistest.Start(t)
	proxy := tcpproxy.Start(t, srv.Addr)
	clock := timeseries.NewManualClock(testnow.Now())
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: proxy.Pool(), Clock: clock,
		FlushTimeout: 500 * time.Millisecond, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	store, _ := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	return rec, proxy, clock, store
}

// TestHeartbeat follows one recorder's heartbeat through the states of
// its connection: it publishes after each flush, with the last good one
// and what it holds; cut off from Redis (through a proxy the test cuts)
// it cannot, whether it has hits to write or none, and says Redis is
// down; restored, it publishes again; closed with everything written it
// says so, and closed while cut off it leaves its last word. The clock
// stays near the wall clock: the recorder's markers expire by Redis's.
func TestHeartbeat(t *testing.T) {
	rec, proxy, clock, store := cutOff(t)
	defer rec.Close(context.Background())
	hits, _ := rec.Counter("hits")
	last := func() timeseries.Heartbeat {
		hbs, err := store.Heartbeats(context.Background())
		if err != nil || len(hbs) != 1 {
			t.Fatalf("heartbeats %+v %v: want one", hbs, err)
		}
		return hbs[0]
	}
	published := func(want time.Time) {
		t.Helper()
		waitFor(t, func() bool {
			hbs, _ := store.Heartbeats(context.Background())
			return len(hbs) == 1 && hbs[0].At.Equal(want)
		})
	}

	rec.Record(hits, hits, hits)
	clock.Advance(time.Second)
	published(clock.Now())
	if hb := last(); !hb.LastFlushOK.Equal(clock.Now()) || hb.PendingHits != 0 || hb.FlushInterval != time.Second ||
		hb.Host == "" || hb.PID == 0 || hb.Closed || hb.Instance == "" {
		t.Fatalf("after a flush: %+v", hb)
	}
	good := clock.Now()

	for _, c := range []struct {
		name string
		hits int
	}{{"cut off with hits to write", 2}, {"cut off and idle", 0}} {
		proxy.Cut()
		for range c.hits {
			rec.Record(hits)
		}
		clock.Advance(time.Second)
		waitFor(t, func() bool { return !rec.Health().RedisUp })
		if hb := last(); !hb.At.Equal(good) {
			t.Errorf("%s: the heartbeat moved to %v", c.name, hb.At)
		}
		proxy.Restore()
		for !rec.Health().RedisUp { // past the backoff
			clock.Advance(time.Second)
			time.Sleep(20 * time.Millisecond)
		}
		waitFor(t, func() bool { hb := last(); return hb.At.Equal(hb.LastFlushOK) && hb.At.After(good) })
		if hb := last(); hb.PendingHits != 0 {
			t.Errorf("%s, then restored: %+v; want nothing pending", c.name, hb)
		}
		good = last().At
	}

	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if hb := last(); !hb.Closed || hb.PendingHits != 0 {
		t.Errorf("after Close: %+v, want closed", hb)
	}
}

// TestHeartbeatLeftWhenClosedCutOff: a recorder that closes while cut
// off, its hits unwritten, does not say it closed: its last heartbeat
// stays, growing old.
func TestHeartbeatLeftWhenClosedCutOff(t *testing.T) {
	rec, proxy, clock, store := cutOff(t)
	hits, _ := rec.Counter("hits")
	clock.Advance(time.Second)
	waitFor(t, func() bool { hbs, _ := store.Heartbeats(context.Background()); return len(hbs) == 1 })
	proxy.Cut()
	rec.Record(hits)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := rec.Close(ctx); err == nil {
		t.Fatal("Close wrote through the cut")
	}
	hbs, err := store.Heartbeats(context.Background())
	if err != nil || len(hbs) != 1 || hbs[0].Closed {
		t.Fatalf("heartbeats %+v %v: want the last one, not closed", hbs, err)
	}
}

// TestSlowSince: the first recorder to count a threshold says since
// when, its start; one that starts later with it leaves that time.
func TestSlowSince(t *testing.T) {
	srv := redistest.Start(t)
	store, _ := timeseries.NewStore(srv.Pool(), timeseries.Schema{Prefix: "app:"}, nil)
	start := testnow.Now().Truncate(time.Second)
	for i, at := range []time.Time{start, start.Add(time.Hour)} {
		clock := timeseries.NewManualClock(at)
		rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: clock, Schema: timeseries.Schema{Prefix: "app:"},
			SlowThresholds: []time.Duration{250 * time.Millisecond, 2 * time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		waitFor(t, func() bool { m, _ := store.SlowSince(context.Background()); return len(m) == 2 })
		rec.Close(context.Background())
		m, err := store.SlowSince(context.Background())
		if err != nil || !m["250ms"].Equal(start) || !m["2m"].Equal(start) {
			t.Fatalf("recorder %d: since %v %v, want both at the first recorder's start %v", i+1, m, err, start)
		}
	}
}
