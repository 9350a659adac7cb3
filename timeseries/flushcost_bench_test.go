package timeseries_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
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
	keys    []string            // a key each node serves, for callCPU
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
		MaxNames: s.series + 10, FlushTimeout: 30 * time.Second, OnError: func(err error) { b.Error(err) }})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(context.Background())
	// Three nodes on this machine's two cores would slow each other down
	// while running at once; on a cluster each node has its own machine.
	r.OneNodeAtATime()
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
	costs := make([]nodeCost, len(s.nodes))
	cpu := make([]int64, len(s.nodes))
	call := make([]int64, len(s.nodes))
	for i, n := range s.nodes {
		call[i] = callCPU(n, s.keys[i])
	}
	b.ResetTimer()
	for range b.N {
		clock.Advance(time.Second)
		second()
		for i, n := range s.nodes {
			n.Do("CONFIG", "RESETSTAT")
			cpu[i] = n.CPU().Microseconds()
		}
		if err := r.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		if h := r.Health(); h.PendingHits != 0 {
			b.Fatalf("a flush of %d series left %d hits pending", s.series, h.PendingHits)
		}
		for i, n := range s.nodes {
			costs[i].cpu += n.CPU().Microseconds() - cpu[i]
			info, _ := redis.String(n.Do("INFO", "commandstats"), nil)
			if os.Getenv("FLUSHCOST_DUMP") != "" {
				b.Log(info)
			}
			c, u := commandCalls(info, s.cluster)
			costs[i].calls += c
			costs[i].cmd += u
			if c > 0 {
				costs[i].call += call[i]
			}
		}
	}
	reportFlushCost(b, s, costs)
}

// nodeCost is what the measured flushes cost one node: commands, their
// commandstats time, and the process's CPU time (user + system), all of
// it: reading and parsing the commands, replying, feeding replicas.
// call is the CPU of a call that does no work (callCPU), once for each
// flush that called the node.
type nodeCost struct{ calls, cmd, cpu, call int64 }

// callCPU is what one call that does next to nothing costs node n, as the
// flushes are measured: the median CPU of the same INFO cpu window around
// one SET of key, a key n serves. It is the price of a round trip, not of
// the work in it: the INFO pair, waking an idle server (tens of µs of CPU
// on a virtual machine, where 50 PINGs pipelined cost 50 µs less than one
// sent alone), the AOF write and its fsync. A busy node pays the wake
// seldom and shares the fsync between the clients of one event loop.
func callCPU(n *redistest.Server, key string) int64 {
	const samples = 21
	got := make([]int64, samples)
	for i := range got {
		n.Do("CONFIG", "RESETSTAT")
		before := n.CPU().Microseconds()
		n.Do("SET", key, i)
		got[i] = n.CPU().Microseconds() - before
		n.Do("INFO", "commandstats")
	}
	n.Do("DEL", key)
	slices.Sort(got)
	return got[samples/2]
}

// reportFlushCost reports per series and flush the sums over nodes and,
// on a cluster, the busiest node's share. work-cpu-us leaves out what each
// call to a node costs whatever it carries (callCPU), so that it is the
// part that grows with the series flushed; call-cpu-us/node is that
// price. redis-us is the commandstats
// time (the commands' own, wall clock: a busy machine inflates it, long
// scripts most); cpu-us the processes' CPU time, which also holds the
// network and protocol work that many small calls cost.
func reportFlushCost(b *testing.B, s flushSetup, costs []nodeCost) {
	per := func(v int64) float64 { return float64(v) / float64(b.N) / float64(s.series) }
	var sum, busiest nodeCost
	for _, c := range costs {
		sum.calls, sum.cmd, sum.cpu, sum.call = sum.calls+c.calls, sum.cmd+c.cmd, sum.cpu+c.cpu, sum.call+c.call
		busiest.calls, busiest.cmd, busiest.cpu = max(busiest.calls, c.calls), max(busiest.cmd, c.cmd), max(busiest.cpu, c.cpu)
	}
	b.ReportMetric(per(sum.calls), "cmds/series-flush")
	b.ReportMetric(per(sum.cmd), "redis-us/series-flush")
	b.ReportMetric(per(sum.cpu), "cpu-us/series-flush")
	b.ReportMetric(per(sum.cpu-sum.call), "work-cpu-us/series-flush")
	b.ReportMetric(float64(sum.call)/float64(b.N)/float64(len(costs)), "call-cpu-us/node")
	if s.cluster {
		b.ReportMetric(per(busiest.calls), "busiest-node-cmds/series-flush")
		b.ReportMetric(per(busiest.cmd), "busiest-node-redis-us/series-flush")
		b.ReportMetric(per(busiest.cpu), "busiest-node-cpu-us/series-flush")
	}
}
