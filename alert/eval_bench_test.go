package alert

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

// countingPool counts round trips (each flush of a pipeline, and each
// command sent on its own), commands, and the buckets read: the fields
// of each HMGET, and each HGETALL (a histogram's bucket).
type countingPool struct {
	p                 *redis.Pool
	rt, cmds, buckets atomic.Int64
}

func (c *countingPool) Get() redis.Conn {
	return &countingConn{Conn: c.p.Get(), rt: &c.rt, cmds: &c.cmds, buckets: &c.buckets}
}

type countingConn struct {
	redis.Conn
	rt, cmds, buckets *atomic.Int64
}

func (c *countingConn) Flush() error { c.rt.Add(1); return c.Conn.Flush() }

func (c *countingConn) Send(cmd string, args ...any) error {
	c.cmds.Add(1)
	switch cmd {
	case "HMGET":
		c.buckets.Add(int64(len(args) - 1))
	case "HGETALL":
		c.buckets.Add(1)
	}
	return c.Conn.Send(cmd, args...)
}

func (c *countingConn) Do(cmd string, args ...any) (any, error) {
	if cmd != "" {
		c.rt.Add(1)
		c.cmds.Add(1)
	}
	return c.Conn.Do(cmd, args...)
}

func (c *countingConn) DoWithTimeout(d time.Duration, cmd string, args ...any) (any, error) {
	if cmd != "" {
		c.rt.Add(1)
		c.cmds.Add(1)
	}
	return redis.DoWithTimeout(c.Conn, d, cmd, args...)
}

func (c *countingConn) ReceiveWithTimeout(d time.Duration) (any, error) {
	return redis.ReceiveWithTimeout(c.Conn, d)
}

// benchTraffic fills the 120 kept buckets of every precision of the app
// and of routes routes, each with its 5xx series and, given thresholds,
// its series of requests slower than each.
func benchTraffic(b *testing.B, pool *redis.Pool, routes int, slow ...time.Duration) {
	c := pool.Get()
	defer c.Close()
	names := []string{App}
	for i := range routes {
		names = append(names, fmt.Sprintf("GET /r%03d/:id", i))
	}
	type part struct {
		name  string
		count int
	}
	for _, t := range slow {
		c.Send("HSET", timeseries.Schema{}.SlowKey(), timeseries.ThresholdText(t), burnNow-30*86400)
	}
	for _, n := range names {
		parts := []part{{n, 100}, {errorSeries(n), 1}}
		for _, t := range slow {
			parts = append(parts, part{timeseries.SlowSeries(n, t), 2})
		}
		for _, p := range tracktest.DefaultPrecisions() {
			for _, s := range parts {
				key := timeseries.Schema{}.CountKey(p, s.name)
				args := redis.Args{key}
				last := timeseries.BucketStart(burnNow, p)
				for k := range int64(120) {
					args = append(args, strconv.FormatInt(last-k*int64(p), 10), s.count)
				}
				c.Send("HSET", args...)
				c.Send("ZADD", "known:", 0, timeseries.KnownMember(p, s.name))
			}
		}
		if err := c.Flush(); err != nil {
			b.Fatal(err)
		}
		for range 2 * len(parts) * len(tracktest.DefaultPrecisions()) {
			if _, err := redis.ReceiveWithTimeout(c, harness.Hang); err != nil {
				b.Fatal(err)
			}
		}
	}
	for range slow {
		if _, err := redis.ReceiveWithTimeout(c, harness.Hang); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluate is one evaluation of the default rules plus one
// availability SLO for every route, over 500 routes: its Redis round
// trips and its CPU time (this process's, not Redis's). The clock moves
// a second per evaluation, so each one writes the values that changed;
// the route list is read again each RouteRefresh (a minute), in pages.
func BenchmarkEvaluate(b *testing.B) {
	srv := redistest.Start(b)
	// MaxBuckets picks the precision of each window: fewer buckets read,
	// at the cost of a coarser cut at the window's old end.
	for _, mb := range []int{30, defaultMaxBuckets, 12} {
		b.Run(fmt.Sprintf("routes=500/maxbuckets=%d", mb), func(b *testing.B) {
			srv.FlushAll()
			benchTraffic(b, srv.Pool(), 500)
			benchEvaluate(b, srv, mb)
		})
	}
	// The same plus a latency SLO for every route: read from histograms
	// of some 80 bins in each bucket the windows read, when the
	// recorders do not count the threshold, and from the count of slow
	// requests, like the 5xx class, when they do.
	latency := Rule{Name: "RouteLatency", Kind: Latency, Series: EveryRoute, Threshold: Duration(500 * time.Millisecond)}
	b.Run(fmt.Sprintf("routes=500/maxbuckets=%d/latency=histograms", defaultMaxBuckets), func(b *testing.B) {
		srv.FlushAll()
		benchTraffic(b, srv.Pool(), 500)
		benchTimings(b, srv.Pool(), 500)
		benchEvaluate(b, srv, defaultMaxBuckets, latency)
	})
	b.Run(fmt.Sprintf("routes=500/maxbuckets=%d/latency=counts", defaultMaxBuckets), func(b *testing.B) {
		srv.FlushAll()
		benchTraffic(b, srv.Pool(), 500, latency.Threshold.Std())
		benchEvaluate(b, srv, defaultMaxBuckets, latency)
	})
}

// benchTimings writes, for the app and routes routes, the durations of
// the 20 latest buckets of each precision the default windows read:
// 81 durations from 1 ms growing by a tenth, one to a bin or so.
func benchTimings(b *testing.B, pool *redis.Pool, routes int) {
	names := []string{App}
	for i := range routes {
		names = append(names, fmt.Sprintf("GET /r%03d/:id", i))
	}
	for _, n := range names {
		tm := timings{}
		for _, p := range []int64{60, 300, 3600, 18000} {
			for k := range int64(20) {
				d := time.Millisecond
				for range 81 {
					tm.addAt(n, int(p), burnNow-k*p, d)
					d = d * 11 / 10
				}
			}
		}
		tm.write(b, pool)
	}
}

func benchEvaluate(b *testing.B, srv *redistest.Server, maxBuckets int, more ...Rule) {
	cp := &countingPool{p: srv.Pool()}
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	rules := append(DefaultRules()[:2], Rule{Name: "RouteSLO", Kind: Availability, Series: EveryRoute})
	rules = append(rules, more...)
	e, err := New(Config{Pool: cp, Clock: clock, Instance: "bench", Rules: rules, MaxBuckets: maxBuckets})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	e.tick(ctx) // takes the lease, reads the routes, writes every state
	if h := e.Health(); h.LastError != "" || !h.Leader {
		b.Fatalf("%+v", h)
	}
	e.mu.Lock()
	alerts := len(e.mem.states)
	e.mu.Unlock()
	b.ReportAllocs()
	cp.rt.Store(0)
	cp.cmds.Store(0)
	cp.buckets.Store(0)
	cpu0, redis0 := cpuTime(), srv.CPU()
	b.ResetTimer()
	for range b.N {
		clock.Advance(time.Second)
		e.tick(ctx)
	}
	b.StopTimer()
	if h := e.Health(); h.LastError != "" {
		b.Fatal(h.LastError)
	}
	b.ReportMetric(float64(cp.rt.Load())/float64(b.N), "roundtrips/eval")
	b.ReportMetric(float64(cp.cmds.Load())/float64(b.N), "commands/eval")
	b.ReportMetric(float64(cp.buckets.Load())/float64(b.N), "buckets/eval")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/eval")
	b.ReportMetric(float64(srv.CPU()-redis0)/float64(b.N)/1e6, "redis-cpu-ms/eval")
	b.ReportMetric(float64(alerts), "alerts")
}

// cpuTime is this process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestEvaluateRoundTrips checks the benchmark's claim outright: an
// evaluation of 500 routes reads each precision once (one round trip on
// one server), plus the lease and the state write.
func TestEvaluateRoundTrips(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	c := pool.Get()
	for i := range 500 {
		n := fmt.Sprintf("GET /r%03d/:id", i)
		for _, p := range tracktest.DefaultPrecisions() {
			c.Send("HSET", timeseries.Schema{}.CountKey(p, n), timeseries.BucketStart(burnNow, p), 100)
			c.Send("ZADD", "known:", 0, timeseries.KnownMember(p, n))
		}
	}
	if _, err := redis.DoWithTimeout(c, harness.Hang, ""); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// precisions read: 1 min, 5 min, 1 h, 5 h (see TestPickPrecision);
	// a latency rule whose threshold the recorders do not count reads
	// the durations at each in a pipeline of their own, beside the
	// counts'; one they count reads its slow series with the counts.
	latencySLO := Rule{Name: "RouteLatency", Kind: Latency, Series: EveryRoute, Threshold: Duration(time.Second)}
	availability := func() []Rule {
		return append(DefaultRules()[:2], Rule{Name: "RouteSLO", Kind: Availability, Series: EveryRoute})
	}
	for _, c := range []struct {
		name    string
		rules   []Rule
		counted bool // the recorders count latencySLO's threshold
		want    int64
	}{
		{"availability", availability(), false, 4},
		{"latency from histograms too", append(availability(), latencySLO), false, 8},
		{"latency from histograms alone", []Rule{latencySLO}, false, 4},
		{"latency from counts too", append(availability(), latencySLO), true, 4},
		{"latency from counts alone", []Rule{latencySLO}, true, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv.Do("DEL", timeseries.Schema{}.SlowKey())
			if c.counted {
				srv.Do("HSET", timeseries.Schema{}.SlowKey(), "1s", burnNow-86400)
			}
			cp := &countingPool{p: pool}
			clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
			e, err := New(Config{Pool: cp, Clock: clock, Instance: "a", Rules: c.rules})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			e.tick(context.Background()) // reads the route list too
			if h := e.Health(); h.LastError != "" {
				t.Fatal(h.LastError)
			}
			clock.Advance(time.Second)
			cp.rt.Store(0)
			if _, err := e.observe(context.Background(), clock.Now()); err != nil {
				t.Fatal(err)
			}
			if got := cp.rt.Load(); got != c.want {
				t.Errorf("%d read round trips, want %d", got, c.want)
			}
		})
	}
}
