package timeseries_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// scriptInner are the commands a flush runs only inside its scripts: their
// time is in the script's own, so it is not added again. On one server the
// known: ZADD is inside the script too; on a cluster it is a command of
// its own.
var scriptInner = map[string]bool{
	"hincrby": true, "hlen": true, "hdel": true, "hmget": true, "hset": true,
	"expireat": true, "get": true, "set": true, "del": true,
}

// commandCalls sums calls and microseconds over INFO commandstats, INFO
// and CONFIG left out. Calls count the commands scripts run too; usec
// leaves them out (see scriptInner).
func commandCalls(info string, cluster bool) (calls, usec int64) {
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || name == "cmdstat_info" || strings.HasPrefix(name, "cmdstat_config") {
			continue
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
		calls += n
		cmd := strings.TrimPrefix(name, "cmdstat_")
		if scriptInner[cmd] || (cmd == "zadd" && !cluster) {
			continue
		}
		if _, u, ok := strings.Cut(rest, "usec="); ok {
			us, _ := strconv.ParseInt(u[:strings.IndexByte(u, ',')], 10, 64)
			usec += us
		}
	}
	return calls, usec
}

type flushSetup struct {
	pool    timeseries.Pool
	nodes   []*redistest.Server // every master
	series  int
	timed   bool // record durations too, as the middleware does
	cluster bool
}

// flushCost measures steady flushes: each iteration is one second of
// traffic (50 requests per series) then one flush, the clock a second on,
// so new buckets start as they would (a 5 s bucket every fifth flush).
// A first flush, not measured, loads the scripts and lists the series.
func flushCost(b *testing.B, s flushSetup) {
	b.ReportAllocs()
	clock := timeseries.NewManualClock(recent())
	r, err := timeseries.NewRecorder(timeseries.Config{Pool: s.pool, Clock: clock, FlushInterval: time.Hour,
		MaxNames: s.series + 10, OnError: func(err error) { b.Error(err) }})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(context.Background())
	cs := make([]*timeseries.Counter, s.series)
	for i := range cs {
		cs[i], _ = r.Counter(fmt.Sprintf("GET /s/%d", i))
	}
	second := func() {
		for i, c := range cs {
			for j := range 50 {
				if s.timed {
					r.RecordDuration(time.Duration(1+(i+j)%20)*time.Millisecond, c)
				} else {
					c.Inc()
				}
			}
		}
	}
	second()
	if err := r.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	calls, usec := make([]int64, len(s.nodes)), make([]int64, len(s.nodes))
	b.ResetTimer()
	for range b.N {
		clock.Advance(time.Second)
		second()
		for _, n := range s.nodes {
			n.Do("CONFIG", "RESETSTAT")
		}
		if err := r.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		for i, n := range s.nodes {
			info, _ := redis.String(n.Do("INFO", "commandstats"), nil)
			if os.Getenv("FLUSHCOST_DUMP") != "" {
				b.Log(info)
			}
			c, u := commandCalls(info, s.cluster)
			calls[i] += c
			usec[i] += u
		}
	}
	reportFlushCost(b, s, calls, usec)
}

// reportFlushCost reports per series and flush the sums over nodes and,
// on a cluster, the busiest node's share.
func reportFlushCost(b *testing.B, s flushSetup, calls, usec []int64) {
	per := func(v int64) float64 { return float64(v) / float64(b.N) / float64(s.series) }
	var sumC, sumU, maxC, maxU int64
	for i := range calls {
		sumC += calls[i]
		sumU += usec[i]
		maxC, maxU = max(maxC, calls[i]), max(maxU, usec[i])
		if s.cluster {
			b.Logf("node %s: %.2f cmds, %.2f redis-us per series and flush", s.nodes[i].Addr, per(calls[i]), per(usec[i]))
		}
	}
	b.ReportMetric(per(sumC), "cmds/series-flush")
	b.ReportMetric(per(sumU), "redis-us/series-flush")
	if s.cluster {
		b.ReportMetric(per(maxC), "busiest-node-cmds/series-flush")
		b.ReportMetric(per(maxU), "busiest-node-redis-us/series-flush")
	}
}
