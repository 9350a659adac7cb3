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

// BenchmarkLayouts reads and writes users of four counts in both cache
// layouts side by side: a warm read (Get), a write-through increment (SQL
// on SQLite, then the cache) and a write-behind increment (Redis only).
// Besides ns/op it reports the Redis server's CPU per operation
// (redis-cpu-µs/op, from INFO cpu, which includes its network work) and
// the time its commands ran (redis-cmd-µs/op, from INFO commandstats).
func BenchmarkLayouts(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed (apt-get install redis-server)")
	}
	const n = 100 * redisstore.BucketSize
	counts := drawCounts(n)
	for _, op := range []string{"read", "write-through", "write-behind"} {
		for _, lay := range layouts {
			b.Run(op+"/"+string(lay), func(b *testing.B) {
				srv := redistest.Start(b)
				c := newCounters(b, Config{DB: sqliteDB(b), Dialect: SQLite, Pool: boundedPool(b, srv), Kinds: []Kind{userKind},
					FlushInterval: time.Hour, Layout: lay, CacheTimeout: 10 * time.Second, StatementTimeout: time.Minute, WriteBehind: op == "write-behind"})
				loadThroughSQL(b, c, counts)
				benchLayoutOp(b, c, srv, op, n)
			})
		}
	}
}

func benchLayoutOp(b *testing.B, c *Counters, srv *redistest.Server, op string, n int) {
	ctx := context.Background()
	var seed atomic.Uint64
	before := readUsage(b, srv)
	b.SetParallelism(2)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(seed.Add(1), 7))
		for pb.Next() {
			id := 1 + r.Int64N(int64(n))
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
	if !c.cacheUp() {
		b.Fatal("the cache went out of use during the run: the figures mix in SQL")
	}
}
