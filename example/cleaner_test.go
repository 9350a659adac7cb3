package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// server is a Redis the example runs on, with the faults a test puts it
// through: down (its port refuses) and back up with its data.
type server struct {
	pool *redis.Pool
	down func()
	up   func()
}

// do runs one command on s, failing the test on a connection error.
func (s server) do(t *testing.T, cmd string, args ...any) any {
	t.Helper()
	c := s.pool.Get()
	defer c.Close()
	v, err := c.Do(cmd, args...)
	if _, isReply := err.(redis.Error); err != nil && !isReply {
		t.Fatalf("%s: %v", cmd, err)
	}
	return v
}

// servers are the two kinds the example takes: a real redis-server 7
// (REDIS_URL) and the embedded one that `make run` starts, set up as
// openEmbeddedRedis sets it up.
var servers = []struct {
	name  string
	start func(t *testing.T) server
}{
	{"redis-server", func(t *testing.T) server {
		srv := redistest.Start(t)
		return server{pool: srv.Pool(), down: srv.Kill, up: srv.Restart}
	}},
	{"embedded", func(t *testing.T) server {
		m, err := startEmbeddedRedis()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		pool := newPool(func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", m.Addr(), redisDialOptions...)
		})
		t.Cleanup(func() { pool.Close() })
		return server{pool: pool, down: m.Close, up: func() {
			if err := m.Restart(); err != nil {
				t.Fatal(err)
			}
		}}
	}},
}

// fillSeries writes one hit in each of the n buckets of precision p up to
// now's, and lists the series, as a recorder that ran that long would.
func fillSeries(t *testing.T, s server, p int, name string, now time.Time, n int) string {
	t.Helper()
	key := timeseries.Schema{}.CountKey(p, name)
	args := []any{key}
	cur := timeseries.BucketStart(now.Unix(), p)
	for i := range n {
		args = append(args, cur-int64(i*p), 1)
	}
	s.do(t, "HSET", args...)
	s.do(t, "ZADD", "known:", 0, timeseries.KnownMember(p, name))
	return key
}

// manualCleaner is a cleaner of s whose passes the test runs, by a clock
// stopped at now.
func manualCleaner(t *testing.T, s server, now time.Time, onError func(error)) *cleaner.Cleaner {
	t.Helper()
	c, err := cleaner.New(cleaner.Config{Pool: s.pool, Clock: timeseries.NewManualClock(now), Manual: true, OnError: onError})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func hlen(t *testing.T, s server, key string) int {
	t.Helper()
	n, err := redis.Int(s.do(t, "HLEN", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The cleaner trims to the newest 120 buckets and unlists what it
// emptied on both servers the example takes. The embedded one compiles
// no script with Redis 7's flags line and answers no INFO server: the
// cleaner finds that out by the script's compile error and trims with
// one plain script call per series, in the same pass, reporting nothing.
func TestCleanerOnEveryServer(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range servers {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.start(t)
			hits := fillSeries(t, s, 5, "hits", now, 200)
			minute := fillSeries(t, s, 60, "GET /posts", now, 130)
			gone := fillSeries(t, s, 5, "GET /old", now.Add(-time.Hour), 10)
			c := manualCleaner(t, s, now, func(err error) { t.Errorf("cleaner: %v", err) })
			for pass := range 2 {
				st, err := c.Pass(context.Background())
				if err != nil {
					t.Fatalf("pass %d: %v", pass, err)
				}
				wantDeleted, wantRemoved := int64(80+10+10), 1
				if pass == 1 {
					wantDeleted, wantRemoved = 0, 0
				}
				if st.FieldsDeleted != wantDeleted || st.SeriesRemoved != wantRemoved {
					t.Errorf("pass %d: %+v, want %d fields deleted and %d series removed", pass, st, wantDeleted, wantRemoved)
				}
			}
			for key, want := range map[string]int{hits: 120, minute: 120, gone: 0} {
				if n := hlen(t, s, key); n != want {
					t.Errorf("HLEN %s = %d, want %d", key, n, want)
				}
			}
			known, _ := redis.Strings(s.do(t, "ZRANGE", "known:", 0, -1), nil)
			if want := []string{"5:hits", "60:GET /posts"}; !slices.Equal(known, want) {
				t.Errorf("known: = %v, want %v", known, want)
			}
		})
	}
}

// Redis down when a pass runs: the pass fails at once with an error and
// deletes nothing. A pass cut off after taking the lock leaves it
// behind, which the next passes respect until it expires (the embedded
// server expires keys by the clock, as a real one does); then a pass
// trims as usual.
func TestCleanerRedisDown(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range servers {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.start(t)
			hits := fillSeries(t, s, 5, "hits", now, 200)
			var reported []error
			c := manualCleaner(t, s, now, func(err error) { reported = append(reported, err) })
			s.down()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			began := time.Now()
			if _, err := c.Pass(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("pass with Redis down: %v, want a connection error at once", err)
			}
			t.Logf("pass with Redis down failed after %v", time.Since(began).Round(time.Millisecond))
			s.up()
			if n := hlen(t, s, hits); n != 200 {
				t.Fatalf("HLEN after a failed pass = %d, want 200", n)
			}

			// The lock of a pass that Redis dropped mid-way, as it was set.
			s.do(t, "SET", "pulse:cleaner:lock", "cut-off-pass", "PX", 1500)
			if st, err := c.Pass(ctx); err != nil || !st.Skipped {
				t.Fatalf("pass while the lock is held: %+v %v, want skipped", st, err)
			}
			time.Sleep(1600 * time.Millisecond)
			if st, err := c.Pass(ctx); err != nil || st.Skipped || st.FieldsDeleted != 80 {
				t.Fatalf("pass after the lock expired: %+v %v, want 80 fields deleted", st, err)
			}
			if n := hlen(t, s, hits); n != 120 {
				t.Errorf("HLEN %s = %d, want 120", hits, n)
			}
			if len(reported) != 0 {
				t.Errorf("passes run by hand reported %v to OnError", reported)
			}
		})
	}
}
