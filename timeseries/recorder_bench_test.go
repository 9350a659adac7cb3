package timeseries_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkRecord measures the request path: one hit in each of three
// series (hits, route, status class), as the middleware records them,
// with all six default precisions. The recorder runs as in production:
// a real redis-server and the flusher draining every second while the
// benchmark records, so the cost of a slot changing second and of the
// drain racing the adds is in the figure. Each run checks afterwards that
// Redis holds exactly as many hits as were recorded.
//
//   - serial: one goroutine, the cost one request pays;
//   - parallel: every P recording at once, the cost under contention
//     (ns/op is wall time over all goroutines' ops);
//   - write-through: Config.WriteThrough, one pipeline to Redis per
//     Record, the original design, for comparison;
//   - duration/serial and duration/parallel: the same three series and
//     a request duration (log-normal, median 20 ms) in the hits and
//     route series, through the call the middlewares make
//     (Recorder.RecordRequest, without a visitor); Redis must then hold as
//     many durations.
func BenchmarkRecord(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed; `make bench` installs it")
	}
	srv := redistest.Start(b)
	// The harness fsyncs every write; a benchmark of the request path
	// should not time the disk, so run it as Redis ships: no AOF.
	srv.Do("CONFIG", "SET", "appendonly", "no")
	pool := srv.Pool()
	type trio struct{ hits, route, status *timeseries.Counter }
	timed := false
	run := func(b *testing.B, cfg timeseries.Config, body func(*testing.B, *timeseries.Recorder, trio)) {
		srv.FlushAll()
		cfg.Pool = pool
		cfg.OnError = func(err error) { b.Error(err) }
		r, err := timeseries.NewRecorder(cfg)
		if err != nil {
			b.Fatal(err)
		}
		var counters []*timeseries.Counter
		for _, name := range []string{"hits", "GET /posts/:id", "status:2xx"} {
			c, err := r.Counter(name)
			if err != nil {
				b.Fatal(err)
			}
			counters = append(counters, c)
		}
		b.ReportAllocs()
		b.ResetTimer()
		body(b, r, trio{counters[0], counters[1], counters[2]})
		b.StopTimer()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			b.Fatal(err)
		}
		if got := srv.HashSum("count:86400:hits"); got != int64(b.N) {
			b.Fatalf("Redis holds %d hits, recorded %d", got, b.N)
		}
		if cfg.DisableDurations {
			return
		}
		var n int64
		keys, _ := redis.Strings(srv.Do("KEYS", "lat:{count:86400:hits}:*"), nil)
		for _, k := range keys {
			c, _ := redis.Int64(srv.Do("HGET", k, "n"), nil)
			n += c
		}
		if timed && n != int64(b.N) {
			b.Fatalf("Redis holds %d durations, recorded %d", n, b.N)
		}
	}
	ds := drawn(1<<12, 1)
	request := func(s trio, d time.Duration) finished {
		return finished{Duration: d, Timed: [timeseries.MaxTimed]*timeseries.Counter{s.hits, s.route}, Counted: [timeseries.MaxCounted]*timeseries.Counter{s.status}}
	}
	timedSerial := func(b *testing.B, r *timeseries.Recorder, s trio) {
		for i := range b.N {
			recordFinished(r, request(s, ds[i&(1<<12-1)]))
		}
	}
	timedParallel := func(b *testing.B, r *timeseries.Recorder, s trio) {
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				recordFinished(r, request(s, ds[i&(1<<12-1)]))
			}
		})
	}
	serial := func(b *testing.B, r *timeseries.Recorder, s trio) {
		for range b.N {
			r.Record(s.hits, s.route, s.status)
		}
	}
	parallel := func(b *testing.B, r *timeseries.Recorder, s trio) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r.Record(s.hits, s.route, s.status)
			}
		})
	}
	b.Run("serial", func(b *testing.B) { timed = false; run(b, timeseries.Config{}, serial) })
	b.Run("parallel", func(b *testing.B) { timed = false; run(b, timeseries.Config{}, parallel) })
	b.Run("write-through", func(b *testing.B) { timed = false; run(b, timeseries.Config{WriteThrough: true}, serial) })
	b.Run("duration/serial", func(b *testing.B) { timed = true; run(b, timeseries.Config{}, timedSerial) })
	b.Run("duration/parallel", func(b *testing.B) { timed = true; run(b, timeseries.Config{}, timedParallel) })
}
