package timeseries_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// BenchmarkScale measures what BENCHMARKS.md's "How far it scales" is built
// from. Each figure is measured once per run on real servers and reported
// as a metric; ns/op is not the point.
//
//   - memory: Redis bytes per series kept at 120 samples × 6 precisions
//     (MEMORY USAGE of its six hashes plus its six known: members);
//   - flush/{server,cluster}/{hits,timed}/<series>: what one flush costs
//     Redis per series written in it (a series with hits in the last
//     second): cmds/series-flush, inner script commands included, and
//     redis-us/series-flush, the Redis CPU time (commandstats usec: what
//     bounds a node), both summed over every node; on the cluster also the
//     busiest node's share, the recorder sending to one node at a time
//     (see Router.OneNodeAtATime). hits is Counter.Inc; timed is what the
//     middleware records, a hit and its duration. cpu-us/series-flush is
//     the nodes' whole CPU time; work-cpu-us/series-flush leaves out the
//     price of each node call whatever it carries (call-cpu-us/node), so
//     that three sizes of flush, 200, 1,000 and 5,000 series, tell what
//     grows with the series from what grows with the nodes called. See
//     flushcost_bench_test.go. PULSE_SCALE_SERIES=10000,100000 sets other
//     sizes, for the growth from 10k to 100k series.
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
				key := series.Keys{}.CountKey(p, name)
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
				n, _ := redis.Int64(srv.Do("MEMORY", "USAGE", series.Keys{}.CountKey(p, name), "SAMPLES", 0), nil)
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
	for _, n := range scaleSizes(b) {
		for _, timed := range []bool{false, true} {
			kind := "hits"
			if timed {
				kind = "timed"
			}
			b.Run(fmt.Sprintf("flush/server/%s/%d", kind, n), func(b *testing.B) {
				srv := redistest.Start(b)
				flushCost(b, flushSetup{pool: srv.Pool(), nodes: []*redistest.Server{srv}, keys: []string{"pulse:bench:call"}, series: n, timed: timed})
			})
			b.Run(fmt.Sprintf("flush/cluster/%s/%d", kind, n), func(b *testing.B) {
				cl := redistest.StartCluster(b, redistest.ClusterOptions{Masters: 3})
				nodes := cl.Masters()
				flushCost(b, flushSetup{pool: cl.Client(b), nodes: nodes, keys: keysOn(cl, nodes), series: n, timed: timed, cluster: true})
			})
		}
	}
}

// keysOn returns a key each of nodes serves.
func keysOn(cl *redistest.Cluster, nodes []*redistest.Server) []string {
	keys := make([]string, len(nodes))
	for i, n := range nodes {
		for j := 0; keys[i] == ""; j++ {
			if k := fmt.Sprintf("pulse:bench:call:%d", j); cl.MasterOf(k) == n {
				keys[i] = k
			}
		}
	}
	return keys
}

// scaleSizes is the flush sizes of BenchmarkScale: 200, 1,000 and 5,000
// series, or the comma-separated list PULSE_SCALE_SERIES gives.
func scaleSizes(b *testing.B) []int {
	env := os.Getenv("PULSE_SCALE_SERIES")
	if env == "" {
		return []int{200, 1000, 5000}
	}
	var sizes []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("PULSE_SCALE_SERIES=%q: want series counts, such as 10000,100000", env)
		}
		sizes = append(sizes, n)
	}
	return sizes
}
