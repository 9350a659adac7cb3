package timeseries_test

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkReadVisitors reads a window of minute buckets of one series from a
// real redis-server on loopback, each bucket's sketch dense (4000
// visitors, 12 KiB), as a busy site's are: the per-bucket PFCOUNTs and the
// union's in one pipeline. It reports the round trips of a read (1) and
// the buckets read per second. Run:
//
//	go test -run '^$' -bench ReadVisitors -benchtime 2s ./timeseries/
func BenchmarkReadVisitors(b *testing.B) {
	srv := redistest.Start(b)
	var trips atomic.Int64
	dial := func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if err != nil {
			return nil, err
		}
		return &roundTripConn{Conn: c, trips: &trips}, nil
	}
	pool := &redis.Pool{MaxIdle: 2, Dial: func() (redis.Conn, error) {
		return redis.Dial("tcp", srv.Addr, redis.DialNetDial(dial), redis.DialReadTimeout(5*time.Second))
	}}
	b.Cleanup(func() { pool.Close() })
	s := readStore(b, pool, "bench:")
	current := timeseries.BucketStart(readNow.Unix(), 60)
	for i := range timeseries.MaxVisitorBuckets {
		key, _ := s.Schema().VisitorKey(60, "hits", current-int64(i)*60)
		args := []any{key}
		for v := range 4000 {
			args = append(args, fmt.Sprint("visitor-", 1000*i+v))
		}
		srv.Do("PFADD", args...)
	}
	ctx := context.Background()
	for _, n := range []int{12, 120, timeseries.MaxVisitorBuckets} {
		b.Run(fmt.Sprintf("buckets=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			trips.Store(0)
			start := time.Now()
			for b.Loop() {
				u, err := s.LastVisitors(ctx, "hits", 60, n)
				if err != nil || u.Window == 0 {
					b.Fatal(u.Window, err)
				}
			}
			b.ReportMetric(float64(trips.Load())/float64(b.N), "round-trips/op")
			b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "buckets/s")
		})
	}
}
