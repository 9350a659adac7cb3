// Package fleet simulates a fleet of app instances writing to Redis, for
// capacity planning: N instances, each a real timeseries.Recorder with its
// own flusher and the adapters' Tracker (routes and status classes, as the
// middlewares count them), record M routes' requests, and the run reports
// what Redis spends on them: CPU, memory, commands, round trips and bytes
// a second, and whether the flushes kept up.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/internal/testenv/redisstat"
	"github.com/pulse-dev/pulse/timeseries"
)

// Config is one run. Zero fields take the defaults.
type Config struct {
	// Addrs are the Redis masters written to: one address, or every
	// master of a cluster (Cluster set). Required.
	Addrs   []string
	Cluster bool
	// Instances is the app instances (default 1), Routes the routes each
	// serves (default 100).
	Instances, Routes int
	// RPS is each instance's requests a second (default 20 × Routes, so
	// that nearly every route is hit every second).
	RPS int
	// Visitors is the pool of distinct visitors (default 10,000).
	Visitors int
	// Warmup runs before the measured window (default 3 s), so every
	// series exists and every script is loaded; Window is measured
	// (default 5 s).
	Warmup, Window time.Duration
	// NoDurations and NoVisitors turn the recorders' durations and
	// visitors off.
	NoDurations, NoVisitors bool
}

func (c Config) withDefaults() (Config, error) {
	if len(c.Addrs) == 0 {
		return c, errors.New("fleet: no Redis address")
	}
	c.Instances = cmpOr(c.Instances, 1)
	c.Routes = cmpOr(c.Routes, 100)
	c.RPS = cmpOr(c.RPS, 20*c.Routes)
	c.Visitors = cmpOr(c.Visitors, 10_000)
	c.Warmup = cmpOr(c.Warmup, 3*time.Second)
	c.Window = cmpOr(c.Window, 5*time.Second)
	if c.Routes < 2 {
		return c, fmt.Errorf("fleet: %d routes: want at least 2", c.Routes)
	}
	return c, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// SeriesPerInstance bounds the series a Meter with routes and status
// classes makes for routes routes: each route and its 2xx, 3xx, 4xx and
// 5xx, the hits series and its classes. A class no request of a route had
// has no series.
func SeriesPerInstance(routes int) int { return 5*routes + 6 }

// instance is one simulated app: a recorder, its tracker, its traffic.
type instance struct {
	rec *timeseries.Recorder
	m   *adapter.Meter[*request]
	gen *traffic
}

func newInstance(i int, pool timeseries.Pool, cfg Config) (*instance, error) {
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, MaxNames: SeriesPerInstance(cfg.Routes) + 20,
		DisableDurations: cfg.NoDurations, DisableVisitors: cfg.NoVisitors, OnError: func(error) {}})
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	mcfg := adapter.DefaultHitsConfig[*request]()
	mcfg.Recorder, mcfg.Routes, mcfg.StatusClasses = rec, true, true
	m, err := meter(mcfg)
	if err != nil {
		rec.Close(context.Background())
		return nil, fmt.Errorf("fleet: %w", err)
	}
	return &instance{rec: rec, m: m, gen: newTraffic(uint64(i), cfg)}, nil
}

// run records rps requests a second, in ticks of 10 ms, until ctx ends.
func (in *instance) run(ctx context.Context, rps int) {
	const tick = 10 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start, sent := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			due := int(now.Sub(start).Seconds() * float64(rps))
			for ; sent < due; sent++ {
				count(in.m, in.gen.next())
			}
		}
	}
}

// Result is what one run measured, per second of its window unless said.
type Result struct {
	Config Config
	// Series is the series names written, over every instance.
	Series int
	// Requests is the requests recorded a second, over every instance.
	Requests float64
	// CPU is the Redis CPU seconds a second summed over the masters,
	// BusiestCPU the busiest master's.
	CPU, BusiestCPU float64
	// Commands, RoundTrips and BytesIn are a second's, over the masters.
	Commands, RoundTrips, BytesIn float64
	// Memory is used_memory summed over the masters at the window's end.
	Memory int64
	// Keys is the key count over the masters at the window's end.
	Keys int64
	// WorstLag is the longest any instance went without a successful
	// flush during the window, and Pending the hits left unwritten at its
	// end: a run holds while WorstLag stays within a few flush intervals.
	WorstLag time.Duration
	Pending  int64
	// Errors is the flush errors seen in the window.
	Errors string
}

// Holds reports whether the flushes kept up: no instance went more than
// 3 s (three flush intervals) without a successful flush.
func (r Result) Holds() bool { return r.WorstLag <= 3*time.Second && r.Errors == "" }

// Run runs cfg's fleet against its Redis and measures it.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	pool, closePool, err := dialPool(cfg)
	if err != nil {
		return Result{}, err
	}
	defer closePool()
	fleet := make([]*instance, 0, cfg.Instances)
	defer func() {
		for _, in := range fleet {
			in.rec.Close(context.Background())
		}
	}()
	for i := range cfg.Instances {
		in, err := newInstance(i, pool, cfg)
		if err != nil {
			return Result{}, err
		}
		in.gen.every(func(r *request) { count(in.m, r) })
		fleet = append(fleet, in)
	}
	loadCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, in := range fleet {
		wg.Go(func() { in.run(loadCtx, cfg.RPS) })
	}
	defer func() { stop(); wg.Wait() }()
	if !sleep(ctx, cfg.Warmup) {
		return Result{}, ctx.Err()
	}
	return measure(ctx, cfg, fleet)
}

// measure watches the fleet for cfg.Window.
func measure(ctx context.Context, cfg Config, fleet []*instance) (Result, error) {
	conns := make([]redis.Conn, len(cfg.Addrs))
	for i, a := range cfg.Addrs {
		c, err := redis.Dial("tcp", a, redis.DialConnectTimeout(5*time.Second), redis.DialReadTimeout(30*time.Second))
		if err != nil {
			return Result{}, fmt.Errorf("fleet: %w", err)
		}
		defer c.Close()
		conns[i] = c
	}
	w, err := redisstat.Open(conns)
	if err != nil {
		return Result{}, err
	}
	res := Result{Config: cfg}
	start := time.Now()
	for time.Since(start) < cfg.Window {
		if !sleep(ctx, 100*time.Millisecond) {
			return res, ctx.Err()
		}
		res.observe(fleet, start)
	}
	got, err := w.Close()
	if err != nil {
		return res, err
	}
	secs := time.Since(start).Seconds()
	res.add(got, secs)
	for _, in := range fleet {
		h := in.rec.Health()
		res.Series += h.Series
		res.Pending += h.PendingHits
	}
	res.Requests = float64(cfg.Instances * cfg.RPS)
	return res, nil
}

// observe notes each instance's time since its last good flush, or
// since start when it had none.
func (r *Result) observe(fleet []*instance, start time.Time) {
	now := time.Now()
	for _, in := range fleet {
		h := in.rec.Health()
		last := h.LastFlushOK
		if last.Before(start) {
			last = start
		}
		r.WorstLag = max(r.WorstLag, now.Sub(last))
		if h.LastError != "" && r.Errors == "" {
			r.Errors = h.LastError
		}
	}
}

// add sums the masters' deltas over secs seconds.
func (r *Result) add(nodes []redisstat.Snapshot, secs float64) {
	for _, n := range nodes {
		cpu := n.CPU.Seconds() / secs
		r.CPU += cpu
		r.BusiestCPU = max(r.BusiestCPU, cpu)
		r.Commands += float64(n.Commands()) / secs
		r.RoundTrips += float64(n.Writes) / secs
		r.BytesIn += float64(n.NetIn) / secs
		r.Memory += n.UsedMemory
		r.Keys += n.Keys
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
