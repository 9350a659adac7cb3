package entity

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/mariadbtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// BenchmarkBatchGet100Warm reads 100 cached posts: one Redis round trip
// per call, reported as trips/op.
func BenchmarkBatchGet100Warm(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed (apt-get install redis-server)")
	}
	srv := redistest.Start(b)
	var trips atomic.Int64
	c := newCounters(b, Config{DB: sqliteDB(b), Dialect: SQLite, Pool: countingPool(b, srv, &trips), FlushInterval: time.Hour})
	ctx := context.Background()
	batch := ids(100, 1)
	for _, id := range batch[:50] {
		mustIncr(b, c, "post", id, "likes", id)
	}
	if _, err := c.BatchGet(ctx, "post", batch); err != nil { // warm
		b.Fatal(err)
	}
	trips.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, err := c.BatchGet(ctx, "post", batch)
		if err != nil {
			b.Fatal(err)
		}
		if got[9]["likes"] != 10 {
			b.Fatalf("post 10 likes = %d", got[9]["likes"])
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(trips.Load())/float64(b.N), "trips/op")
}

// BenchmarkHotRow has 32 goroutines increment one post's views on MariaDB
// (SQL only): all on one row (slots=1) against spread over slot rows.
func BenchmarkHotRow(b *testing.B) {
	d, err := mariadbtest.StartDatabase(b)
	if err != nil {
		b.Skipf("MariaDB could not be started: %v", err)
	}
	const writers = 32
	d.DB.SetMaxOpenConns(writers + 8)
	d.DB.SetMaxIdleConns(writers + 8)
	for _, slots := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			kind := Kind{Name: "post", Fields: []string{"views"}}
			if slots > 1 {
				kind.Hot = map[string]int{"views": slots}
			}
			table := fmt.Sprintf("hot_%d", slots)
			c := newCounters(b, Config{DB: d.DB, Dialect: MySQL, Kinds: []Kind{kind}, Table: table, FoldInterval: time.Hour})
			before := sqlValue(b, c, "post", 1, "views")
			ctx := context.Background()
			// RunParallel starts parallelism × GOMAXPROCS goroutines.
			b.SetParallelism((writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.Incr(ctx, "post", 1, "views", 1); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if got := sqlValue(b, c, "post", 1, "views") - before; got != int64(b.N) {
				b.Fatalf("views grew by %d, want %d", got, b.N)
			}
		})
	}
}

// BenchmarkBufferedVsWriteThrough has 32 goroutines increment one post's
// views, buffered (an in-process add, flushed every second) against
// write-through (SQL then Redis per increment), on SQLite with Redis.
func BenchmarkBufferedVsWriteThrough(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed (apt-get install redis-server)")
	}
	const writers = 32
	for _, mode := range []string{"write-through", "buffered"} {
		b.Run(mode, func(b *testing.B) {
			srv := redistest.Start(b)
			kind := Kind{Name: "post", Fields: []string{"views"}}
			if mode == "buffered" {
				kind.Buffered = []string{"views"}
			}
			c := newCounters(b, Config{DB: sqliteDB(b), Dialect: SQLite, Pool: boundedPool(b, srv), Kinds: []Kind{kind}})
			ctx := context.Background()
			b.SetParallelism((writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.Incr(ctx, "post", 1, "views", 1); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if err := c.FlushBuffered(ctx); err != nil {
				b.Fatal(err)
			}
			if got := sqlValue(b, c, "post", 1, "views"); got != int64(b.N) {
				b.Fatalf("views = %d, want %d", got, b.N)
			}
		})
	}
}
