package timeseries_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redistest"
	"github.com/pulse-dev/pulse/internal/series"
	"github.com/pulse-dev/pulse/timeseries"
)

// commandCalls sums calls and microseconds over INFO commandstats, INFO
// and CONFIG left out. Calls count the commands scripts run too. The time
// of HINCRBY, GET and SET, which a flush only runs inside its script, is
// left out, as the script's own time holds it.
func commandCalls(info string) (calls, usec int64) {
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(line, ":calls=")
		if !ok || name == "cmdstat_info" || name == "cmdstat_config" {
			continue
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
		calls += n
		switch name {
		case "cmdstat_hincrby", "cmdstat_get", "cmdstat_set":
			continue
		}
		if _, u, ok := strings.Cut(rest, "usec="); ok {
			us, _ := strconv.ParseInt(u[:strings.IndexByte(u, ',')], 10, 64)
			usec += us
		}
	}
	return calls, usec
}

// BenchmarkScale measures what BENCHMARKS.md's "How far it scales" is built
// from. Each figure is measured once per run on real servers and reported
// as a metric; ns/op is not the point.
//
//   - memory: Redis bytes per series kept at 120 samples × 6 precisions
//     (MEMORY USAGE of its six hashes plus its six known: members);
//   - flush/server, flush/cluster: Redis commands one flush costs per
//     series written in it (a series with hits in the last second), inner
//     script commands included, summed over every node, and the Redis CPU
//     time they took (commandstats usec: what bounds a node).
func BenchmarkScale(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed")
	}
	b.Run("memory", func(b *testing.B) {
		srv := redistest.Start(b)
		const numSeries = 500
		now := time.Now().Unix()
		for i := range numSeries {
			name := fmt.Sprintf("GET /api/v1/items/:id/%d", i)
			for _, p := range series.DefaultPrecisions {
				key := series.Schema{}.CountKey(p, name)
				args := []any{key}
				for j := range 120 {
					// Realistic counts: a few hundred per bucket.
					args = append(args, series.BucketStart(now, p)-int64(j*p), 100+j*7)
				}
				srv.Do("HSET", args...)
				srv.Do("ZADD", "known:", 0, series.Member(p, name))
			}
		}
		var hashes int64
		for i := range numSeries {
			name := fmt.Sprintf("GET /api/v1/items/:id/%d", i)
			for _, p := range series.DefaultPrecisions {
				n, _ := redis.Int64(srv.Do("MEMORY", "USAGE", series.Schema{}.CountKey(p, name), "SAMPLES", 0), nil)
				hashes += n
			}
		}
		known, _ := redis.Int64(srv.Do("MEMORY", "USAGE", "known:", "SAMPLES", 0), nil)
		enc, _ := redis.String(srv.Do("OBJECT", "ENCODING", "count:5:GET /api/v1/items/:id/0"), nil)
		for range b.N {
		}
		b.ReportMetric(float64(hashes+known)/numSeries, "B/series")
		b.ReportMetric(float64(hashes)/numSeries/6, "B/hash")
		b.Logf("hash encoding %s; known: %d B for %d members", enc, known, numSeries*6)
	})
	flushCost := func(b *testing.B, pool timeseries.Pool, reset func(), infos func() []string) {
		const series = 200
		r, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, FlushInterval: time.Hour, OnError: func(err error) { b.Error(err) }})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close(context.Background())
		cs := make([]*timeseries.Counter, series)
		for i := range cs {
			cs[i], _ = r.Counter(fmt.Sprintf("GET /s/%d", i))
		}
		var calls, usec int64
		for range b.N {
			for _, c := range cs {
				for range 50 {
					c.Inc()
				}
			}
			reset()
			if err := r.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			for _, info := range infos() {
				c, u := commandCalls(info)
				calls += c
				usec += u
			}
		}
		b.ReportMetric(float64(calls)/float64(b.N)/series, "cmds/series")
		b.ReportMetric(float64(usec)/float64(b.N)/series, "redis-µs/series")
	}
	b.Run("flush/server", func(b *testing.B) {
		srv := redistest.Start(b)
		flushCost(b, srv.Pool(), func() { srv.Do("CONFIG", "RESETSTAT") }, func() []string {
			s, _ := redis.String(srv.Do("INFO", "commandstats"), nil)
			return []string{s}
		})
	})
	b.Run("flush/cluster", func(b *testing.B) {
		cl := redistest.StartCluster(b, redistest.ClusterOptions{Masters: 3})
		flushCost(b, cl.Client(b), func() {
			for _, s := range cl.Masters() {
				s.Do("CONFIG", "RESETSTAT")
			}
		}, func() []string {
			var out []string
			for _, s := range cl.Masters() {
				v, _ := redis.String(s.Do("INFO", "commandstats"), nil)
				out = append(out, v)
			}
			return out
		})
	})
}
