package cleaner_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkPass measures one full pass (every precision due) over 10 000
// series names × 6 precisions (or the counts of names PULSE_SCALE_SERIES
// lists, such as 10000,100000, each a sub-benchmark), each hash holding 130 buckets of which 10
// are past the newest 120, on one redis-server and on a cluster of 3
// masters. Before each pass the 10 trimmed buckets are written back,
// outside the timer.
//
// Reported: s/pass; cmds/series, the Redis commands of the pass (INFO
// commandstats on every node, those run inside scripts included) per
// hash, i.e. per known: member, and cmds/name per name over its 6
// precisions; round-trips, Stats.RoundTrips (on a cluster each is one
// pipeline per node, served at once); scripts/node, the script calls of
// the busiest node; redis-cpu-s/pass, the CPU time all Redis processes
// spent (INFO cpu), which a busy machine disturbs less than s/pass;
// ms/script, how long a script call holds its node, on average.
func BenchmarkPass(b *testing.B) {
	sizes := passSizes(b)
	for _, n := range sizes {
		suffix := ""
		if len(sizes) > 1 || n != defaultPassNames {
			suffix = "/" + strconv.Itoa(n)
		}
		b.Run("server"+suffix, func(b *testing.B) {
			srv := redistest.Start(b)
			benchPass(b, srv.Pool(), []*redistest.Server{srv}, n)
		})
		b.Run("cluster"+suffix, func(b *testing.B) {
			cl := redistest.StartCluster(b, redistest.ClusterOptions{Masters: 3})
			benchPass(b, cl.Client(b), cl.Masters(), n)
		})
	}
}

const defaultPassNames = 10000

// passSizes is the counts of series names BenchmarkPass cleans: 10 000,
// or the comma-separated list PULSE_SCALE_SERIES gives, each a multiple
// of 250 (the names are written 250 to a pipeline).
func passSizes(b *testing.B) []int {
	env := os.Getenv("PULSE_SCALE_SERIES")
	if env == "" {
		return []int{defaultPassNames}
	}
	var sizes []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || n%250 != 0 {
			b.Fatalf("PULSE_SCALE_SERIES=%q: want counts of names, multiples of 250, such as 10000,100000", env)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

func benchPass(b *testing.B, pool timeseries.Pool, nodes []*redistest.Server, numNames int) {
	const fields, keep, precisions = 130, 120, 6
	names := seriesNames("GET /bench/", numNames)
	write := func(from int) {
		for i := 0; i < numNames; i += 250 {
			writeSeries(b, pool, 0, names[i:i+250], from, fields)
		}
	}
	write(0)
	hashes := numNames * precisions

	b.ReportAllocs()
	b.ResetTimer()
	var trips, commands, maxScripts int64
	var elapsed time.Duration
	var cpu float64     // seconds of CPU the Redis processes used
	var slowest float64 // ms a script call took on average, on the node where that is most
	for range b.N {
		b.StopTimer()
		write(keep)
		c, err := cleaner.New(cleaner.Config{Pool: pool, Clock: timeseries.NewManualClock(t0), Manual: true, OnError: func(err error) { b.Error(err) }})
		if err != nil {
			b.Fatal(err)
		}
		before := make([]map[string]int, len(nodes))
		cpuBefore := 0.0
		usecBefore := make([]int64, len(nodes))
		for i, s := range nodes {
			before[i] = s.Commands()
			cpuBefore += s.CPU().Seconds()
			usecBefore[i] = scriptUsec(b, s)
		}
		start := time.Now()
		b.StartTimer()
		st, err := c.Pass(context.Background())
		b.StopTimer()
		elapsed += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if st.Series != hashes || st.FieldsDeleted != int64(hashes*(fields-keep)) {
			b.Fatalf("pass cleaned %d series and %d fields, want %d and %d", st.Series, st.FieldsDeleted, hashes, hashes*(fields-keep))
		}
		for i, s := range nodes {
			all, scripts := cleanerCommands(before[i], s.Commands())
			commands += all
			maxScripts = max(maxScripts, scripts)
			cpu += s.CPU().Seconds()
			if scripts > 0 {
				slowest = max(slowest, float64(scriptUsec(b, s)-usecBefore[i])/float64(scripts)/1000)
			}
		}
		cpu -= cpuBefore
		trips += int64(st.RoundTrips)
		_ = c.Close(context.Background())
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(elapsed.Seconds()/n, "s/pass")
	b.ReportMetric(float64(commands)/n/float64(hashes), "cmds/series")
	b.ReportMetric(float64(commands)/n/float64(numNames), "cmds/name")
	b.ReportMetric(float64(trips)/n, "round-trips")
	b.ReportMetric(float64(maxScripts), "scripts/node")
	b.ReportMetric(cpu/n, "redis-cpu-s/pass")
	b.ReportMetric(slowest, "ms/script")
}

// scriptUsec is the time s spent in EVALSHA (INFO commandstats): how long
// a script call keeps the node from serving others.
func scriptUsec(tb testing.TB, s *redistest.Server) int64 {
	tb.Helper()
	info, err := redis.String(s.Do("INFO", "commandstats"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	_, rest, ok := strings.Cut(info, "cmdstat_evalsha:")
	if !ok {
		return 0
	}
	_, rest, _ = strings.Cut(rest, "usec=")
	n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
	return n
}
