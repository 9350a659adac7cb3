package entity

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// redisUsage is what a server has spent so far: CPU (user + system, from
// INFO cpu) and the time its commands ran (INFO commandstats), in µs.
type redisUsage struct{ cpu, cmd float64 }

func readUsage(tb testing.TB, srv *redistest.Server) redisUsage {
	tb.Helper()
	u := redisUsage{cpu: float64(srv.CPU().Microseconds())}
	stats, err := redis.String(srv.Do("INFO", "commandstats"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(stats, "\r\n") {
		_, rest, ok := strings.Cut(line, "usec=")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, ",")
		f, _ := strconv.ParseFloat(n, 64)
		u.cmd += f
	}
	return u
}

// BenchmarkLayouts reads and writes users of four counts in every cache
// layout side by side, LayoutSparse with snowflake and random ids: a warm
// read (Get), a write-through increment (SQL on SQLite, then the cache)
// and a write-behind increment (Redis only). Besides ns/op it reports the
// Redis server's CPU per operation (redis-cpu-µs/op, from INFO cpu, which
// includes its network work), the time its commands ran
// (redis-cmd-µs/op, from INFO commandstats) and the commands they were
// (redis-calls/op, scripts and what they ran).
func BenchmarkLayouts(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed (apt-get install redis-server)")
	}
	const n = 100 * redisstore.BucketSize
	counts := drawCounts(n)
	cases := []memoryCase{{lay: LayoutHash, shape: denseShape}, {lay: LayoutCompact, shape: denseShape},
		{lay: LayoutSparse, shape: snowflakeShape}, {lay: LayoutSparse, shape: randomShape}}
	for _, op := range []string{"read", "write-through", "write-behind"} {
		for _, mc := range cases {
			b.Run(op+"/"+mc.name(), func(b *testing.B) {
				users := mc.shape.draw(n)
				srv := redistest.StartWith(b, redistest.Options{Args: shippedConf})
				c := newCounters(b, Config{DB: sqliteDB(b), Dialect: SQLite, Pool: boundedPool(b, srv), Kinds: []Kind{usersOf(n)},
					FlushInterval: time.Hour, Layout: mc.lay, CacheTimeout: 10 * time.Second, StatementTimeout: time.Minute, WriteBehind: op == "write-behind"})
				loadThroughSQL(b, c, users, counts)
				benchLayoutOp(b, c, srv, op, users)
			})
		}
	}
}

func benchLayoutOp(b *testing.B, c *Counters, srv *redistest.Server, op string, users []int64) {
	ctx := context.Background()
	var seed atomic.Uint64
	before, calls := readUsage(b, srv), totalCalls(srv)
	b.SetParallelism(2)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(seed.Add(1), 7))
		for pb.Next() {
			id := users[r.IntN(len(users))]
			var err error
			if op == "read" {
				_, err = c.Get(ctx, "user", id)
			} else {
				err = c.Incr(ctx, "user", id, "posts", 1)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	after := readUsage(b, srv)
	b.ReportMetric((after.cpu-before.cpu)/float64(b.N), "redis-cpu-µs/op")
	b.ReportMetric((after.cmd-before.cmd)/float64(b.N), "redis-cmd-µs/op")
	b.ReportMetric(float64(totalCalls(srv)-calls)/float64(b.N), "redis-calls/op")
	if !c.cs.cacheUp() {
		b.Fatal("the cache went out of use during the run: the figures mix in SQL")
	}
}

// totalCalls is every command the server ran, those inside scripts
// included, less the INFO calls that read it.
func totalCalls(srv *redistest.Server) int {
	sum := 0
	for name, n := range srv.Commands() {
		if name != "info" {
			sum += n
		}
	}
	return sum
}
