package timeseries_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// newRecorder is a recorder on srv's pool (or cfg's), closed when the
// test ends. A write is bounded by harness.Hang unless cfg sets
// FlushTimeout: a test whose flushes must land is not about how fast a
// loaded machine runs them, and the tests of a server that stops
// answering set the short bound they trip.
func newRecorder(t *testing.T, srv *redistest.Server, cfg timeseries.Config) *timeseries.Recorder {
	t.Helper()
	if cfg.Pool == nil {
		cfg.Pool = srv.Pool()
	}
	if cfg.FlushTimeout == 0 {
		cfg.FlushTimeout = harness.Hang
	}
	if cfg.OnError == nil {
		cfg.OnError = func(error) {}
	}
	r, err := timeseries.NewRecorder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	return r
}

func mustCounter(t *testing.T, r *timeseries.Recorder, name string) *timeseries.Counter {
	t.Helper()
	c, err := r.Counter(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sums reads every precision of a series straight from Redis.
func sums(t *testing.T, srv *redistest.Server, prefix, name string) map[int]int64 {
	t.Helper()
	out := map[int]int64{}
	for _, p := range series.DefaultPrecisions {
		m, err := redis.Int64Map(srv.Do("HGETALL", fmt.Sprintf("%scount:%d:%s", prefix, p, name)), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range m {
			out[p] += v
		}
	}
	return out
}

func assertSums(t *testing.T, srv *redistest.Server, prefix, name string, want int64) {
	t.Helper()
	for p, got := range sums(t, srv, prefix, name) {
		if got != want {
			t.Errorf("%s at precision %d sums to %d, want %d", name, p, got, want)
		}
	}
}

func flush(t *testing.T, r *timeseries.Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), harness.Hang)
	defer cancel()
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// heldClock stands still at the tests' now (testnow), so that a test's
// hits, however long a loaded machine takes to record them, fall in one
// bucket of every precision: a budget per bucket written does not then
// hang on whether recording crossed a 5 s edge.
func heldClock() *timeseries.ManualClock { return timeseries.NewManualClock(testnow.Now()) }

// flushCommands flushes r and returns how many commands Redis ran for it,
// scripts' inner commands included (commandCalls), with the command stats
// it read them from.
func flushCommands(t *testing.T, srv *redistest.Server, r *timeseries.Recorder) (int, string) {
	t.Helper()
	srv.Do("CONFIG", "RESETSTAT")
	flush(t, r)
	info, err := redis.String(srv.Do("INFO", "commandstats"), nil)
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := commandCalls(info, false)
	return int(calls), info
}

// The helpers' flushes outlast a server that stalls for longer than the
// recorder's 2 s default bound, as a loaded machine's can: a test whose
// flushes must land fails on a lost count, never on a slow one. (Without
// visitors, whose salt fetch would spend the stall's first 2 s and only
// be reported, the stall falls on the write of the hits.)
func TestHelpersOutlastAStall(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{FlushInterval: time.Hour, DisableVisitors: true})
	hits := mustCounter(t, r, "hits")
	r.Record(hits)
	srv.Pause()
	resumed := time.AfterFunc(3*time.Second, srv.Resume)
	defer resumed.Stop()
	flush(t, r)
	assertSums(t, srv, "", "hits", 1)
}
