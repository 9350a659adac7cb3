package timeseries_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// known: gets a member when it may be missing, and only then: on the
// first write, and when a write creates a hash again after the cleaner
// emptied it and unlisted the series. A flush that creates no hash sends
// no ZADD at all.
func TestKnownListedWhenItMayBeMissing(t *testing.T) {
	for _, mode := range []string{"server", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			clock := timeseries.NewManualClock(recent())
			cfg := timeseries.Config{Clock: clock, FlushInterval: time.Hour}
			var r *timeseries.Recorder
			var masters []*redistest.Server
			var do func(key, cmd string, args ...any) any
			if mode == "server" {
				srv := redistest.Start(t)
				r, masters, do = newRecorder(t, srv, cfg), []*redistest.Server{srv}, serverDo(srv)
			} else {
				var cl *redistest.Cluster
				cl, r = clusterRecorder(t, cfg)
				masters, do = cl.Masters(), clusterDo(t, cl)
			}
			const name = "GET /k"
			c := mustCounter(t, r, name)
			listed := func() (n int) {
				for _, p := range series.DefaultPrecisions {
					if do("known:", "ZSCORE", "known:", series.Member(p, name)) != nil {
						n++
					}
				}
				return n
			}
			c.Inc()
			flush(t, r)
			if n := listed(); n != 6 {
				t.Fatalf("after the first write %d of 6 precisions listed", n)
			}

			clock.Advance(time.Second)
			c.Inc()
			for _, s := range masters {
				s.Do("CONFIG", "RESETSTAT")
			}
			flush(t, r)
			for _, s := range masters {
				if n := statCalls(t, s, "zadd"); n != 0 {
					t.Errorf("a flush that created no hash ran ZADD %d times on %s", n, s.Addr)
				}
			}

			// Much later every bucket is old: the cleaner empties the
			// hashes and unlists the series.
			clock.Advance(200 * 24 * time.Hour)
			cln, err := cleaner.New(cleaner.Config{Recorder: r, Manual: true, OnError: func(error) {}})
			if err != nil {
				t.Fatal(err)
			}
			defer cln.Close(context.Background())
			st, err := cln.Pass(context.Background())
			if err != nil || st.SeriesRemoved != 6 || listed() != 0 {
				t.Fatalf("cleaner pass: %+v, %v; %d precisions still listed", st, err, listed())
			}
			c.Inc()
			c.Inc()
			flush(t, r)
			if n := listed(); n != 6 {
				t.Errorf("after the hashes were created again %d of 6 precisions listed", n)
			}
			for _, p := range series.DefaultPrecisions {
				key := series.Keys{}.CountKey(p, name)
				if got := hashTotal(t, do, key); got != 2 {
					t.Errorf("%s sums to %d, want 2", key, got)
				}
			}
		})
	}
}

// hashTotal adds up the fields of the hash key.
func hashTotal(t *testing.T, do func(key, cmd string, args ...any) any, key string) int64 {
	t.Helper()
	m, err := redis.Int64Map(do(key, "HGETALL", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
