package timeseries_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/pulse-dev/pulse/timeseries"
)

func ExampleRecorder() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL")) // e.g. redis://127.0.0.1:6379/0
	}}
	defer pool.Close()

	clock := timeseries.NewManualClock(time.Unix(1700000000, 0))
	schema := timeseries.Schema{Precisions: []int{5, 60}}
	rec, _ := timeseries.NewRecorder(timeseries.Config{Pool: pool, Schema: schema, Clock: clock})
	hits, _ := rec.Counter("hits")
	hits.Inc()
	hits.Inc()
	clock.Advance(5 * time.Second)
	hits.Inc()
	_ = rec.Close(context.Background()) // writes what is pending

	store, _ := timeseries.NewStore(pool, schema, clock)
	series, _ := store.Series(context.Background())
	fmt.Println(series)
	for _, p := range []int{5, 60} {
		samples, _ := store.Samples(context.Background(), "hits", p, timeseries.Range{})
		fmt.Println(p, samples)
	}
	// Output:
	// [{hits [5 60]}]
	// 5 [{1700000000 2} {1700000005 1}]
	// 60 [{1699999980 3}]
}

func ExampleStore_BucketsMany() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL")) // e.g. redis://127.0.0.1:6379/0
	}}
	defer pool.Close()

	clock := timeseries.NewManualClock(time.Unix(1700000000, 0))
	schema := timeseries.Schema{Precisions: []int{5}}
	rec, _ := timeseries.NewRecorder(timeseries.Config{Pool: pool, Schema: schema, Clock: clock})
	logins, _ := rec.Counter("logins")
	for range 4 {
		logins.Inc()
	}
	_ = rec.Close(context.Background())

	// A reader that keeps the older buckets reads only the newest ones.
	store, _ := timeseries.NewStore(pool, schema, clock)
	got, _ := store.BucketsMany(context.Background(), 5, []timeseries.BucketQuery{{Name: "logins", Times: []int64{1699999995, 1700000000}}})
	fmt.Println(got[0].Counts, got[0].Present)
	// Output:
	// [0 4] [false true]
}
