package timeseries_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redisstat"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkScaleAlternated is the steady measure of what a cluster's flush
// costs against one server's: one server and a 3-master cluster run side
// by side, and their flushes alternate, server first in even rounds,
// cluster first in odd ones, so that whatever else loads the machine
// falls on both alike. Each round is one second of traffic and one flush
// on each; the figures are per series and flush, medians over the rounds
// (PULSE_SCALE_ROUNDS, default 11), the ratio cluster ÷ server taken round
// by round and given with its 90 % bootstrap interval in the log:
//
//   - cpu-us: the Redis processes' CPU time, every node summed (INFO cpu
//     read just around the flush);
//   - cmds, round-trips, bytes-in: commands run (those inside scripts
//     included), client round trips (write events) and request bytes,
//     summed over the nodes: counts that do not wobble;
//   - scripts/node: script calls per node and flush.
//
// Run it with -benchtime 1x: one iteration runs every round.
func BenchmarkScaleAlternated(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed")
	}
	rounds := 11
	if v, err := strconv.Atoi(os.Getenv("PULSE_SCALE_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	for _, c := range []struct {
		kind   string
		series int
	}{{"hits", 200}, {"hits", 2000}, {"timed", 1000}} {
		b.Run(fmt.Sprintf("%s/%d", c.kind, c.series), func(b *testing.B) {
			srv := redistest.Start(b)
			cl := redistest.StartCluster(b, redistest.ClusterOptions{Masters: 3})
			sides := [2]*flushSide{
				newFlushSide(b, srv.Pool(), []*redistest.Server{srv}, c.series, c.kind == "timed"),
				newFlushSide(b, cl.Client(b), cl.Masters(), c.series, c.kind == "timed"),
			}
			for range b.N {
				for i := range rounds {
					for j := range 2 {
						sides[(i+j)%2].round(b)
					}
				}
			}
			reportAlternated(b, sides)
		})
	}
}

// flushSide is one Redis deployment under the alternated measure: a
// recorder with its series and the rounds measured so far.
type flushSide struct {
	rec    *timeseries.Recorder
	clock  *timeseries.ManualClock
	cs     []*timeseries.Counter
	timed  bool
	nodes  []*redistest.Server
	conns  []redis.Conn
	rounds [][]redisstat.Snapshot // by round, by node
	idle   []float64              // by node: CPU µs a second with nothing to do
	busy   []float64              // by round: CPU µs over the nodes less their idle CPU
}

func newFlushSide(b *testing.B, pool timeseries.Pool, nodes []*redistest.Server, series int, timed bool) *flushSide {
	s := &flushSide{clock: timeseries.NewManualClock(recent()), timed: timed, nodes: nodes}
	r, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, Clock: s.clock, FlushInterval: time.Hour,
		MaxNames: series + 10, FlushTimeout: 30 * time.Second, DisableVisitors: true,
		DisableDurations: !timed, OnError: func(err error) { b.Error(err) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close(context.Background()) })
	// Three nodes on two cores would slow each other down while running
	// at once; on a cluster each node has its own machine.
	r.OneNodeAtATime()
	s.rec = r
	for i := range series {
		c, err := r.Counter(fmt.Sprintf("GET /s/%d", i))
		if err != nil {
			b.Fatal(err)
		}
		s.cs = append(s.cs, c)
	}
	for _, n := range nodes {
		conn := n.Pool().Get()
		b.Cleanup(func() { conn.Close() })
		s.conns = append(s.conns, conn)
	}
	// The first flush loads the scripts and lists the series.
	s.traffic()
	if err := r.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	s.idle = idleCPU(b, s.conns)
	return s
}

// idleCPU is what each server spends a second doing nothing for a
// client: its cron and, on a cluster, the bus between nodes.
func idleCPU(b *testing.B, conns []redis.Conn) []float64 {
	w, err := redisstat.Open(conns)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	time.Sleep(time.Second)
	got, err := w.Close()
	if err != nil {
		b.Fatal(err)
	}
	out := make([]float64, len(got))
	for i, g := range got {
		out[i] = float64(g.CPU.Microseconds()) / time.Since(start).Seconds()
	}
	return out
}

// traffic records one second of it: 50 requests a series.
func (s *flushSide) traffic() {
	for i, c := range s.cs {
		for j := range 50 {
			if s.timed {
				s.rec.RecordDuration(time.Duration(1+(i+j)%20)*time.Millisecond, c)
			} else {
				c.Inc()
			}
		}
	}
}

// round measures one flush of a second's traffic.
func (s *flushSide) round(b *testing.B) {
	s.clock.Advance(time.Second)
	s.traffic()
	start := time.Now()
	w, err := redisstat.Open(s.conns)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.rec.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	got, err := w.Close()
	if err != nil {
		b.Fatal(err)
	}
	s.rounds = append(s.rounds, got)
	busy := 0.0
	for i, n := range got {
		busy += float64(n.CPU.Microseconds()) - s.idle[i]*time.Since(start).Seconds()
	}
	s.busy = append(s.busy, busy/float64(len(s.cs)))
}

// perSeries is f summed over the nodes of each round, per series flushed.
func (s *flushSide) perSeries(f func(redisstat.Snapshot) float64) []float64 {
	out := make([]float64, len(s.rounds))
	for i, nodes := range s.rounds {
		for _, n := range nodes {
			out[i] += f(n)
		}
		out[i] /= float64(len(s.cs))
	}
	return out
}

// scriptsPerNode is the median over rounds of each node's script calls.
func (s *flushSide) scriptsPerNode() []float64 {
	return s.perNode(func(s redisstat.Snapshot) float64 { return float64(s.Scripts()) })
}

// perNode is the median over rounds of f of each node.
func (s *flushSide) perNode(f func(redisstat.Snapshot) float64) []float64 {
	out := make([]float64, len(s.nodes))
	for j := range s.nodes {
		xs := make([]float64, len(s.rounds))
		for i, nodes := range s.rounds {
			xs[i] = f(nodes[j])
		}
		out[j] = redisstat.Median(xs)
	}
	return out
}

var alternatedFigures = []struct {
	unit string
	f    func(redisstat.Snapshot) float64
}{
	{"cpu-us", func(s redisstat.Snapshot) float64 { return float64(s.CPU.Microseconds()) }},
	{"cmds", func(s redisstat.Snapshot) float64 { return float64(s.Commands()) }},
	{"round-trips", func(s redisstat.Snapshot) float64 { return float64(s.Writes) }},
	{"bytes-in", func(s redisstat.Snapshot) float64 { return float64(s.NetIn) }},
}

// logRatio reports the medians of a figure per series-flush on each side
// and of their ratio round by round, and logs the ratio's interval.
func logRatio(b *testing.B, unit string, server, cluster []float64) {
	ratios := make([]float64, len(server))
	for i := range ratios {
		ratios[i] = cluster[i] / server[i]
	}
	b.ReportMetric(redisstat.Median(server), "server-"+unit+"/series-flush")
	b.ReportMetric(redisstat.Median(cluster), "cluster-"+unit+"/series-flush")
	b.ReportMetric(redisstat.Median(ratios), "cluster/server-"+unit)
	b.Logf("%s per series-flush: server %.4g, cluster %.4g, cluster ÷ server %s", unit,
		redisstat.Median(server), redisstat.Median(cluster), redisstat.Summary(ratios))
}

// reportAlternated reports each side's medians per series-flush, and logs
// each ratio's median with its interval.
func reportAlternated(b *testing.B, sides [2]*flushSide) {
	for _, fig := range alternatedFigures {
		logRatio(b, fig.unit, sides[0].perSeries(fig.f), sides[1].perSeries(fig.f))
	}
	logRatio(b, "busy-cpu-us", sides[0].busy, sides[1].busy)
	b.Logf("idle CPU per node, µs a second: server %.0f, cluster %.0f", sides[0].idle, sides[1].idle)
	b.Logf("script calls per node and flush: server %v, cluster %v", sides[0].scriptsPerNode(), sides[1].scriptsPerNode())
	for i, name := range []string{"server", "cluster"} {
		b.Logf("%s per node and flush, µs: CPU %v, script time (commandstats) %v", name,
			sides[i].perNode(func(s redisstat.Snapshot) float64 { return float64(s.CPU.Microseconds()) }),
			sides[i].perNode(func(s redisstat.Snapshot) float64 { return float64(s.Usec["evalsha"] + s.Usec["eval"]) }))
	}
}
