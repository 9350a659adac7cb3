package alert

import (
	"context"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestRedisGapNotZero: Redis stops for 20 minutes while the app keeps
// serving; the recorder holds the hits. Neither the outage nor the
// moment after the restart, before the recorder's flush lands, makes the
// app look silent: the absence rule never fires. The clock starts at the
// wall clock's time, since the recorder's keys expire by Redis's clock.
func TestRedisGapNotZero(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	start := time.Now()
	tr := traffic{}
	for k := int64(1); k <= 8*24*60; k++ {
		tr.add(App, start.Unix()-60*k, 10)
	}
	tr.write(t, pool)
	clock := timeseries.NewManualClock(start)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, Clock: clock, MaxPendingAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer closeRecorder(rec)
	hits, err := rec.Counter(App)
	if err != nil {
		t.Fatal(err)
	}
	h := newHook(t)
	e, err := New(Config{
		Pool: pool, Clock: clock, Instance: "a", Recorder: rec,
		Rules:     []Rule{{Name: "Absent", Kind: Absence, Series: App}},
		Receivers: []Receiver{{Name: "team", Kind: ToWebhook, URL: h.srv.URL}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	flushed := func() bool { return rec.Health().PendingHits == 0 && rec.Health().RedisUp }
	minute := func() {
		for range 10 {
			rec.Record(hits)
		}
		for range 60 {
			clock.Advance(time.Second)
		}
	}

	minute()
	waitFor(t, "the first flush", flushed)
	e.tick(ctx)
	if s := e.Health(); !s.Leader || s.DataMissing {
		t.Fatalf("before the outage: %+v", s)
	}

	srv.Stop()
	for range 20 {
		minute()
		e.tick(ctx)
	}
	if s := e.Health(); s.LastError == "" {
		t.Errorf("no error while Redis was down: %+v", s)
	}
	// A flush the last minute started may not have reached Redis yet, and
	// on a loaded machine would reach it restarted. One more waits for it
	// (they take one lock), fails, and backs the recorder off until its
	// clock moves: nothing is written before flushAgain.
	fctx, cancel := context.WithTimeout(ctx, harness.Hang)
	defer cancel()
	if err := rec.Flush(fctx); err == nil {
		t.Fatal("a flush with Redis stopped succeeded")
	}
	srv.Restart()
	// Restart counts a server still LOADING its data as up; this test is
	// about the gap before the recorder's flush, so it waits for the data.
	waitFor(t, "Redis to load its data", func() bool {
		c := srv.Pool().Get()
		defer c.Close()
		_, err := c.Do("PING")
		return err == nil
	})
	// Redis is back but empty of the last 20 minutes until the recorder
	// flushes: an evaluation now sees the data as missing, not as zero.
	e.tick(ctx)
	if s := e.Health(); !s.DataMissing {
		t.Fatalf("after the restart, before the flush: %+v", s)
	}
	if states, _, err := e.st.load(ctx); err != nil || len(states) != 1 || !states["Absent\x00page\x00hits"].Stale {
		t.Fatalf("stored states %v %v: want the one alert marked stale", states, err)
	}
	flushAgain(t, clock, rec) // the recorder's backoff ends; it flushes the 20 minutes
	e.tick(ctx)
	if s := e.Health(); s.DataMissing || s.LastError != "" {
		t.Fatalf("after the flush: %+v", s)
	}
	idle(t, e)
	_, tr2, err := e.st.snapshot(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr2) != 0 || len(h.bodies()) != 0 {
		t.Fatalf("transitions %+v, notifications %d: the gap was taken for silence", tr2, len(h.bodies()))
	}
}
