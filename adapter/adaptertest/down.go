package adaptertest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/timeseries"
)

// With Redis down (nothing listens where the pool dials) requests are
// answered as ever, without waiting on Redis, and the Recorder holds
// their hits for a later flush.
func testRedisDown(t testing.TB, k *kit) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // a port nothing listens on
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", addr, redis.DialConnectTimeout(time.Second))
	}}
	defer pool.Close()
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, FlushInterval: time.Hour, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = rec.Close(ctx)
	}()
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, basicRoutes())
	start := time.Now()
	for range 100 {
		if code := s.hit(t, http.MethodGet, "/status/200"); code != http.StatusOK {
			t.Fatalf("answered %d with Redis down", code)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("100 requests took %v with Redis down: they waited on it", took)
	}
	s.wait()
	// Each request is a hit in hits, its route, its class and its
	// route's class.
	if hp := rec.Health(); hp.PendingHits != 400 || hp.DroppedHits != 0 {
		t.Errorf("the Recorder holds %d hits pending, %d dropped; want the 100 requests' 400, none dropped", hp.PendingHits, hp.DroppedHits)
	}
}
