package timeseries_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

var t0 = time.Unix(1700000000, 0) // a 5 s bucket start; mid-bucket for the others

func TestRecorderBucketsAndKnownSet(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	r := newRecorder(t, srv, timeseries.Config{Clock: clock, FlushInterval: time.Hour})
	hits := mustCounter(t, r, "hits")

	hits.Inc()                      // t0
	clock.Advance(4 * time.Second)  // t0+4: same 5 s bucket
	hits.Inc()                      //
	clock.Advance(2 * time.Second)  // t0+6: next 5 s bucket
	hits.Inc()                      //
	clock.Advance(64 * time.Second) // t0+70: same ring slot as t0+6, next minute
	hits.Inc()
	flush(t, r)

	want := map[int]map[string]int64{
		5:     {"1700000000": 2, "1700000005": 1, "1700000070": 1},
		60:    {"1699999980": 3, "1700000040": 1},
		300:   {"1699999800": 4},
		3600:  {"1699999200": 4},
		18000: {"1699992000": 4},
		86400: {"1699920000": 4},
	}
	for p, fields := range want {
		got, err := redis.Int64Map(srv.Do("HGETALL", fmt.Sprintf("count:%d:hits", p)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(fields) {
			t.Errorf("count:%d:hits = %v, want %v", p, got, fields)
		}
	}
	members, _ := redis.Strings(srv.Do("ZRANGE", "known:", 0, -1, "WITHSCORES"), nil)
	wantMembers := "[18000:hits 0 300:hits 0 3600:hits 0 5:hits 0 60:hits 0 86400:hits 0]"
	if fmt.Sprint(members) != wantMembers {
		t.Errorf("known: = %v, want %v", members, wantMembers)
	}
}

func TestRecorderPrefix(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{Schema: timeseries.Schema{Prefix: "app1:", Precisions: []int{5}}})
	mustCounter(t, r, "hits").Inc()
	flush(t, r)
	keys, _ := redis.Strings(srv.Do("KEYS", "*"), nil)
	for _, k := range keys {
		if k[:5] != "app1:" {
			t.Errorf("key %q is outside the prefix", k)
		}
	}
	if n, _ := redis.Int(srv.Do("ZCARD", "app1:known:"), nil); n != 1 {
		t.Errorf("app1:known: has %d members, want 1", n)
	}
}

func TestRecorderConcurrentExact(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{FlushInterval: 10 * time.Millisecond})
	hits := mustCounter(t, r, "hits")
	route := mustCounter(t, r, "GET /posts/:id")
	var wg sync.WaitGroup
	for g := 0; g < 50; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				r.Record(hits, route)
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	assertSums(t, srv, "", "hits", 50000)
	assertSums(t, srv, "", "GET /posts/:id", 50000)
}

func TestTwoRecordersSumExactly(t *testing.T) {
	srv := redistest.Start(t)
	a := newRecorder(t, srv, timeseries.Config{FlushInterval: 5 * time.Millisecond})
	b := newRecorder(t, srv, timeseries.Config{FlushInterval: 7 * time.Millisecond})
	var wg sync.WaitGroup
	for _, r := range []*timeseries.Recorder{a, b} {
		c := mustCounter(t, r, "hits")
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 2500; i++ {
					c.Inc()
				}
			}()
		}
	}
	wg.Wait()
	flush(t, a)
	flush(t, b)
	assertSums(t, srv, "", "hits", 20000)
}

func TestWriteThroughWritesBeforeReturning(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	r := newRecorder(t, srv, timeseries.Config{WriteThrough: true, Clock: clock, FlushInterval: time.Hour})
	hits := mustCounter(t, r, "hits")
	for i := 0; i < 3; i++ {
		hits.Inc()
	}
	// No Flush: the hits are in Redis already.
	assertSums(t, srv, "", "hits", 3)
	if n, _ := redis.Int(srv.Do("ZCARD", "known:"), nil); n != 6 {
		t.Errorf("known: has %d members, want 6", n)
	}
}

func TestNameCapFoldsIntoOverflow(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{MaxNames: 3})
	var cs []*timeseries.Counter
	for i := 0; i < 10; i++ {
		cs = append(cs, mustCounter(t, r, fmt.Sprintf("route-%d", i)))
	}
	for _, c := range cs {
		c.Inc()
	}
	flush(t, r)
	for i := 0; i < 3; i++ {
		if timeseries.CounterName(cs[i]) != fmt.Sprintf("route-%d", i) {
			t.Errorf("counter %d named %q, want its own name", i, timeseries.CounterName(cs[i]))
		}
	}
	for i := 3; i < 10; i++ {
		if timeseries.CounterName(cs[i]) != series.DefaultOverflowName {
			t.Errorf("counter %d named %q, want the overflow series", i, timeseries.CounterName(cs[i]))
		}
	}
	assertSums(t, srv, "", series.DefaultOverflowName, 7)
	h := r.Health()
	if h.OverflowNames != 7 || h.Series != 3 {
		t.Errorf("health = %+v, want 7 refused names and 3 series", h)
	}
	// A name already admitted is still its own series after the cap.
	if c := mustCounter(t, r, "route-1"); timeseries.CounterName(c) != "route-1" {
		t.Errorf("route-1 folded after the cap was reached")
	}
	if _, err := r.Counter("bad\nname"); err == nil {
		t.Error("a name with a newline was accepted")
	}
}

func TestCloseFlushesEverything(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	c := mustCounter(t, r, "hits")
	for i := 0; i < 1234; i++ {
		c.Inc()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	assertSums(t, srv, "", "hits", 1234)
	if h := r.Health(); h.PendingHits != 0 {
		t.Errorf("after Close %d hits pending", h.PendingHits)
	}
}

// A flush whose reply is lost is resent; Redis applies it once.
func TestLostReplyIsNotCountedTwice(t *testing.T) {
	srv := redistest.Start(t)
	var errs atomic.Int64
	r := newRecorder(t, srv, timeseries.Config{
		FlushInterval: time.Hour,
		FlushTimeout:  300 * time.Millisecond,
		OnError:       func(error) { errs.Add(1) },
	})
	c := mustCounter(t, r, "hits")
	for i := 0; i < 100; i++ {
		c.Inc()
	}
	// Warm a pooled connection so the flush does not need to dial.
	flush(t, r)

	for i := 0; i < 50; i++ {
		c.Inc()
	}
	srv.Pause() // the request reaches the socket; the reply never comes
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	err := r.Flush(ctx)
	cancel()
	srv.Resume() // Redis now runs the request it had buffered
	if err == nil {
		t.Fatal("flush against a paused Redis succeeded")
	}
	if h := r.Health(); h.RedisUp || h.PendingHits != 50 {
		t.Errorf("health after the failed flush = %+v, want Redis down and 50 pending", h)
	}
	flush(t, r) // resends the same batch: refused as already applied
	assertSums(t, srv, "", "hits", 150)
	if h := r.Health(); !h.RedisUp || h.PendingHits != 0 || h.LastError != "" {
		t.Errorf("health after recovery = %+v", h)
	}
}

func TestRedisDownThenBack(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{FlushInterval: 20 * time.Millisecond, FlushTimeout: 200 * time.Millisecond})
	c := mustCounter(t, r, "hits")
	record := func(n int) {
		for i := 0; i < n; i++ {
			c.Inc()
		}
	}
	record(1000)
	flush(t, r)
	srv.Stop()
	record(2000)
	waitFor(t, func() bool { return !r.Health().RedisUp })
	record(3000)
	if h := r.Health(); h.PendingHits != 5000 || h.DroppedHits != 0 {
		t.Errorf("while down: %+v, want 5000 pending, none dropped", h)
	}
	srv.Restart()
	waitFor(t, func() bool { h := r.Health(); return h.RedisUp && h.PendingHits == 0 })
	assertSums(t, srv, "", "hits", 6000)
}

func TestOldHitsDroppedPastMaxPendingAge(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	r := newRecorder(t, srv, timeseries.Config{
		Clock:         clock,
		FlushInterval: time.Hour,
		FlushTimeout:  200 * time.Millisecond,
		MaxPendingAge: 10 * time.Minute,
	})
	c := mustCounter(t, r, "hits")
	srv.Stop()
	for i := 0; i < 7; i++ {
		c.Inc()
	}
	clock.Advance(5 * time.Minute)
	c.Inc()
	ctx := context.Background()
	if err := r.Flush(ctx); err == nil {
		t.Fatal("flush with Redis stopped succeeded")
	}
	clock.Advance(6 * time.Minute) // the first 7 hits are now 11 minutes old
	_ = r.Flush(ctx)
	if h := r.Health(); h.DroppedHits != 7 || h.PendingHits != 1 {
		t.Errorf("health = %+v, want 7 dropped and 1 pending", h)
	}
	srv.Restart()
	flush(t, r)
	assertSums(t, srv, "", "hits", 1)
}

func TestRecorderConfigErrors(t *testing.T) {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return nil, errors.New("unused") }}
	tests := []struct {
		name string
		cfg  timeseries.Config
	}{
		{"no pool", timeseries.Config{}},
		{"bad precision", timeseries.Config{Pool: pool, Schema: timeseries.Schema{Precisions: []int{0}}}},
		{"negative interval", timeseries.Config{Pool: pool, FlushInterval: -1}},
		{"negative cap", timeseries.Config{Pool: pool, MaxNames: -1}},
		{"bad overflow name", timeseries.Config{Pool: pool, OverflowName: "a\nb"}},
		{"negative pending age", timeseries.Config{Pool: pool, MaxPendingAge: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r, err := timeseries.NewRecorder(tt.cfg); err == nil {
				r.Close(context.Background())
				t.Error("NewRecorder accepted a bad config")
			}
		})
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return nil, errors.New("no redis in this test") }}
	r, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, FlushInterval: time.Hour, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(canceled())
	a, _ := r.Counter("hits")
	b, _ := r.Counter("GET /")
	c, _ := r.Counter("status:2xx")
	r.Record(a, b, c) // the first hit of a second takes the slow path
	if n := testing.AllocsPerRun(1000, func() { r.Record(a, b, c) }); n != 0 {
		t.Errorf("Record allocates %.1f times per call, want 0", n)
	}
}

// A flush costs Redis at most 2 commands per series and precision written,
// scripts' inner commands included, whatever the request rate: the writes
// are per bucket, not per hit.
func TestFlushCommandBudget(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{Clock: heldClock(), FlushInterval: time.Hour})
	names := []string{"hits", "GET /posts/:id", "status:2xx"}
	var cs []*timeseries.Counter
	for _, n := range names {
		cs = append(cs, mustCounter(t, r, n))
	}
	for _, hits := range []int{10, 10000} {
		for range hits {
			r.Record(cs...)
		}
		total, info := flushCommands(t, srv, r)
		budget := 2 * len(names) * len(series.DefaultPrecisions)
		if total > budget {
			t.Errorf("%d hits: flush ran %d Redis commands, budget %d\n%s", hits, total, budget, info)
		}
		t.Logf("%d hits per series: %d commands for %d series×precisions", hits, total, len(names)*len(series.DefaultPrecisions))
	}
}

func TestTotalsCountEveryHitOnce(t *testing.T) {
	srv := redistest.Start(t)
	for _, wt := range []bool{false, true} {
		t.Run(fmt.Sprintf("writeThrough=%v", wt), func(t *testing.T) {
			srv.FlushAll()
			r := newRecorder(t, srv, timeseries.Config{WriteThrough: wt})
			a, b := mustCounter(t, r, "a"), mustCounter(t, r, "b")
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 250 {
						r.Record(a, b)
						a.Inc()
					}
				}()
			}
			wg.Wait()
			check := func(when string) {
				got := map[string]int64{}
				for _, st := range r.Totals() {
					got[st.Name] = st.Hits
				}
				if got["a"] != 4000 || got["b"] != 2000 || got["overflow"] != 0 {
					t.Fatalf("%s: totals %v, want a=4000 b=2000 overflow=0", when, got)
				}
			}
			check("before flush")
			if err := r.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			check("after flush")
		})
	}
}
