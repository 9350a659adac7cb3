package timeseries_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestCloseBeforeTheSaltFetch: a Recorder closed at once, its pool closed
// right after, reports nothing. The day's salt, which NewRecorder fetches
// in the background, is either fetched before Close returns or not at
// all: a fetch left running would find the pool closed.
func TestCloseBeforeTheSaltFetch(t *testing.T) {
	srv := redistest.Start(t)
	for round := range 40 {
		pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", srv.Addr) }}
		var errs atomic.Int64
		var last atomic.Value
		r, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, FlushInterval: time.Hour,
			OnError: func(err error) { errs.Add(1); last.Store(err.Error()) }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = r.Close(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		pool.Close()
		time.Sleep(10 * time.Millisecond) // time for a fetch left running to fail
		if n := errs.Load(); n != 0 {
			t.Fatalf("round %d: %d errors after Close; the last: %v", round, n, last.Load())
		}
	}
}
