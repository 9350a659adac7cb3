package fleet_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/bench/fleet"
	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redisstat"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkDashboardReads is what the dashboard's busiest reads cost at
// 2,000 and 20,000 series names (a recorder's MaxNames raised that far),
// each with 120 full buckets at 5 s and 1 min: server-cpu-ms/op is this
// process's CPU time (user + system) per request, redis-cpu-ms/op the
// server's. "first" is a dashboard's first request (a new handler each
// time: every bucket read); "polled" a request of a dashboard already
// serving the view, as an open page polls it.
func BenchmarkDashboardReads(b *testing.B) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("redis-server not installed")
	}
	for _, names := range []int{2000, 20000} {
		target, err := fleet.StartTarget(context.Background(), false)
		if err != nil {
			b.Fatal(err)
		}
		pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", target.Addrs[0]) }}
		fill(b, pool, names)
		for _, path := range []string{"/api/overview?precision=5", "/api/routes?precision=60"} {
			b.Run(fmt.Sprintf("%d%s/first", names, path), func(b *testing.B) {
				hs := make([]http.Handler, b.N)
				for i := range hs {
					hs[i] = newHandler(b, pool)
				}
				serveCost(b, hs, pool, path)
			})
			b.Run(fmt.Sprintf("%d%s/polled", names, path), func(b *testing.B) {
				h := newHandler(b, pool)
				serve(b, h, path)
				serveCost(b, slices.Repeat([]http.Handler{h}, b.N), pool, path)
			})
		}
		pool.Close()
		target.Stop()
	}
}

// fill writes names series at 5 s and 1 min, 120 buckets each, listed in
// known:.
func fill(b *testing.B, pool *redis.Pool, names int) {
	conn := pool.Get()
	defer conn.Close()
	schema := timeseries.Schema{}
	now := time.Now().Unix()
	for i := range names {
		name := fmt.Sprintf("GET /api/r%d/:id", i)
		for _, p := range []int{5, 60} {
			args := []any{schema.CountKey(p, name)}
			for j := range int64(120) {
				args = append(args, timeseries.BucketStart(now, p)-j*int64(p), 100+i%50)
			}
			conn.Send("HSET", args...)
			conn.Send("ZADD", "known:", 0, fmt.Sprintf("%d:%s", p, name))
		}
		if i%500 == 499 {
			if _, err := redis.DoWithTimeout(conn, harness.Hang, ""); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := redis.DoWithTimeout(conn, harness.Hang, ""); err != nil {
		b.Fatal(err)
	}
}

// newHandler is a dashboard of the series in pool.
func newHandler(b *testing.B, pool *redis.Pool) http.Handler {
	store, err := timeseries.NewStore(pool, timeseries.Schema{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	h, err := dashboard.Handler(dashboard.Config{Store: store, Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// serve answers one request for path with h, which must answer 200.
func serve(b *testing.B, h http.Handler, path string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	if w.Code != http.StatusOK {
		b.Fatalf("%s: %d %s", path, w.Code, w.Body)
	}
}

// serveCost serves path once with each of hs (b.N of them) and reports
// the CPU both sides spent per request, the commands Redis ran and the
// bytes it answered.
func serveCost(b *testing.B, hs []http.Handler, pool *redis.Pool, path string) {
	b.ReportAllocs()
	conn := pool.Get()
	defer conn.Close()
	runtime.GC() // what came before (a warm-up's full read) is not theirs to collect
	infoOut, redisBefore := infoReply(b, conn)
	before := processCPU()
	b.ResetTimer()
	for _, h := range hs {
		serve(b, h, path)
	}
	b.StopTimer()
	cpu := processCPU() - before
	redisAfter, err := redisstat.Take(conn)
	if err != nil {
		b.Fatal(err)
	}
	d, n := redisAfter.Sub(redisBefore), float64(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/1000/n, "server-cpu-ms/op")
	b.ReportMetric(float64(d.CPU.Microseconds())/1000/n, "redis-cpu-ms/op")
	// Counts, which do not wobble with the host's load as CPU times do.
	b.ReportMetric(float64(d.Commands())/n, "redis-cmds/op")
	b.ReportMetric(float64(d.NetOut-infoOut)/1024/n, "redis-out-KiB/op")
}

// infoReply takes two snapshots in a row: the bytes the second's INFO
// reply added to the server's output, which the next one after the
// requests counts too, and that second snapshot.
func infoReply(b *testing.B, conn redis.Conn) (int64, redisstat.Snapshot) {
	first, err := redisstat.Take(conn)
	if err != nil {
		b.Fatal(err)
	}
	second, err := redisstat.Take(conn)
	if err != nil {
		b.Fatal(err)
	}
	return second.NetOut - first.NetOut, second
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
