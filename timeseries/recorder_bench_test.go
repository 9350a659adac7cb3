package timeseries_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkRecord measures the request path: one hit in each of three
// series (hits, route, status class), as the middleware records them.
func BenchmarkRecord(b *testing.B) {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return nil, errors.New("not used: the flusher never runs") }}
	r, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, FlushInterval: time.Hour, OnError: func(error) {}})
	if err != nil {
		b.Fatal(err)
	}
	hits, _ := r.Counter("hits")
	route, _ := r.Counter("GET /posts/:id")
	status, _ := r.Counter("status:2xx")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Record(hits, route, status)
		}
	})
}
