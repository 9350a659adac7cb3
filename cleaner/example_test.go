package cleaner_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/timeseries"
)

func ExampleCleaner_Pass() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL")) // e.g. redis://127.0.0.1:6379/0
	}}
	defer pool.Close()

	// 130 five-second buckets of "hits", and one series long gone quiet.
	now := time.Unix(1700000000, 0)
	conn := pool.Get()
	for i := range 130 {
		conn.Do("HSET", "count:5:hits", now.Unix()-int64(5*i), 1)
	}
	conn.Do("HSET", "count:5:old", now.Unix()-86400, 1)
	conn.Do("ZADD", "known:", 0, "5:hits", 0, "5:old")

	c, _ := cleaner.New(cleaner.Config{Pool: pool, Clock: timeseries.NewManualClock(now), Manual: true})
	st, _ := c.Pass(context.Background())
	fmt.Println("deleted", st.FieldsDeleted, "fields, removed", st.SeriesRemoved, "series")
	n, _ := redis.Int(conn.Do("HLEN", "count:5:hits"))
	known, _ := redis.Strings(conn.Do("ZRANGE", "known:", 0, -1))
	conn.Close()
	fmt.Println(n, known)
	// Output:
	// deleted 11 fields, removed 1 series
	// 120 [5:hits]
}
