package alert

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// traffic adds counts to series as the recorder would, at every
// precision of the default schema, with hashes that never expire so that
// a test's clock may sit anywhere.
type traffic map[string]map[string]int64 // key -> bucket -> count

func (tr traffic) add(name string, t, n int64) {
	for _, p := range tracktest.DefaultPrecisions() {
		key := timeseries.Schema{}.CountKey(p, name)
		if tr[key] == nil {
			tr[key] = map[string]int64{}
		}
		tr[key][strconv.FormatInt(timeseries.BucketStart(t, p), 10)] += n
	}
}

// write stores the traffic and lists its series in the known set.
func (tr traffic) write(t testing.TB, pool *redis.Pool) { writeHashes(t, pool, tr, true) }

// writeHashes stores each key's fields; with known, it lists the count
// keys' series in the known set too.
func writeHashes(t testing.TB, pool *redis.Pool, hashes map[string]map[string]int64, known bool) {
	t.Helper()
	c := pool.Get()
	defer c.Close()
	for key, fields := range hashes {
		args := redis.Args{key}
		for f, n := range fields {
			args = append(args, f, n)
		}
		c.Send("HSET", args...)
		if known {
			c.Send("ZADD", "known:", 0, key[len("count:"):])
		}
	}
	if _, err := redis.DoWithTimeout(c, harness.Hang, ""); err != nil {
		t.Fatal(err)
	}
}

func newRouter(p *redis.Pool) *redisconn.Router { return redisconn.NewRouter(p) }

// flushAgain moves clock a second at a time until rec has flushed
// everything within the last second: a flush the clock's ticker started
// while the flusher was busy is skipped, so one jump may not bring one.
func flushAgain(t *testing.T, clock *timeseries.ManualClock, rec *timeseries.Recorder) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		clock.Advance(time.Second)
		time.Sleep(5 * time.Millisecond)
		h := rec.Health()
		if h.RedisUp && h.PendingHits == 0 && clock.Now().Sub(h.LastFlushOK) <= time.Second {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recorder did not flush: %+v", h)
		}
	}
}

// closeRecorder closes rec within a bound: under a ManualClock its pause
// between close attempts waits on that clock, which no one moves then.
func closeRecorder(rec *timeseries.Recorder) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec.Close(ctx)
}
