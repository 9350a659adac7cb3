package cleaner_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// backend is a single server or the shared cluster, seen the same way.
type backend struct {
	name string
	pool timeseries.Pool
	do   func(key, cmd string, args ...any) any
}

func backends(t *testing.T) []backend {
	srv := redistest.Start(t)
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	return []backend{
		{"server", srv.Pool(), func(_ string, cmd string, args ...any) any { return srv.Do(cmd, args...) }},
		{"cluster", cl.Client(t), func(key, cmd string, args ...any) any { return cl.Do(t, key, cmd, args...) }},
	}
}

func (b backend) fill(p int, name string, times []int64) {
	key := fmt.Sprintf("count:%d:%s", p, name)
	args := []any{key}
	for _, ts := range times {
		args = append(args, ts, 1)
	}
	if len(times) > 0 {
		b.do(key, "HSET", args...)
	}
	b.do("known:", "ZADD", "known:", 0, timeseries.KnownMember(p, name))
}

func (b backend) listed(t *testing.T, p int, name string) bool {
	return b.do("known:", "ZSCORE", "known:", timeseries.KnownMember(p, name)) != nil
}

func (b backend) hlen(t *testing.T, key string) int {
	n, err := redis.Int(b.do(key, "HLEN", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPassOnServerAndCluster(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			for i := range 20 {
				b.fill(5, fmt.Sprintf("long%d", i), buckets(t0, 5, 130, 0))
				b.fill(5, fmt.Sprintf("stale%d", i), []int64{t0.Unix() - 5*1000})
			}
			c := newCleaner(t, cleaner.Config{Pool: b.pool, PageSize: 7, Clock: timeseries.NewManualClock(t0)})
			st := pass(t, c)
			if st.Series != 40 || st.SeriesRemoved != 20 || st.FieldsDeleted != 20*10+20 {
				t.Errorf("stats %+v, want 40 series, 20 removed, 220 fields deleted", st)
			}
			for i := range 20 {
				if n := b.hlen(t, fmt.Sprintf("count:5:long%d", i)); n != 120 || !b.listed(t, 5, fmt.Sprintf("long%d", i)) {
					t.Errorf("long%d: %d fields, listed %v; want 120, listed", i, n, b.listed(t, 5, fmt.Sprintf("long%d", i)))
				}
				if b.listed(t, 5, fmt.Sprintf("stale%d", i)) {
					t.Errorf("stale%d still listed", i)
				}
			}
			// A second cleaner while the first holds the lock skips.
			c2 := newCleaner(t, cleaner.Config{Pool: b.pool, Clock: timeseries.NewManualClock(t0)})
			b.do("pulse:cleaner:lock", "SET", "pulse:cleaner:lock", "someone")
			if st := pass(t, c2); !st.Skipped {
				t.Errorf("pass with the lock taken: %+v, want skipped", st)
			}
			b.do("pulse:cleaner:lock", "DEL", "pulse:cleaner:lock")
		})
	}
}

// A write that lands between the trim that emptied a hash and the
// unlisting (the recorder's HINCRBY and then its ZADD, which finds the
// member still listed) is found by the cleaner's second look, so the
// series is listed again at once. Without that look it would stay
// unlisted with data until the recorder happens to write it again.
func TestWriteBeforeUnlistIsListedAgain(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			b.fill(5, "racy", []int64{t0.Unix() - 5*1000})
			b.fill(5, "gone", []int64{t0.Unix() - 5*1000})
			c := newCleaner(t, cleaner.Config{Pool: b.pool, Clock: timeseries.NewManualClock(t0)})
			cleaner.SetBeforeUnlist(c, func() {
				b.do("count:5:racy", "HINCRBY", "count:5:racy", t0.Unix(), 1)
				b.do("known:", "ZADD", "known:", 0, "5:racy")
			})
			st := pass(t, c)
			if !b.listed(t, 5, "racy") {
				t.Error("a series with data was left unlisted")
			}
			if b.listed(t, 5, "gone") {
				t.Error("an empty series stayed listed")
			}
			if st.SeriesRemoved != 1 {
				t.Errorf("%d removed, want 1", st.SeriesRemoved)
			}
		})
	}
}

// A recorder writing while two cleaners delete everything it wrote (their
// clock runs an hour ahead): every hash that exists is listed at the end.
func TestWriterWinsOnCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	pool := cl.Client(t)
	schema := timeseries.Schema{Precisions: []int{5, 60}}
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, Schema: schema, WriteThrough: true, OnError: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close(context.Background())
	clock := timeseries.NewManualClock(time.Now().Add(time.Hour))
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		c := newCleaner(t, cleaner.Config{Pool: pool, Schema: schema, Samples: 1, Clock: clock, OnError: func(error) {}})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = c.Pass(ctx)
			}
		}()
	}
	const names = 200
	for i := range names {
		ctr, err := rec.Counter(fmt.Sprintf("s%d", i))
		if err != nil {
			t.Fatal(err)
		}
		ctr.Inc()
		ctr.Inc()
	}
	stop()
	wg.Wait()
	for i := range names {
		for _, p := range schema.Precisions {
			key := fmt.Sprintf("count:%d:s%d", p, i)
			exists, _ := redis.Int(cl.Do(t, key, "EXISTS", key), nil)
			listed := cl.Do(t, "known:", "ZSCORE", "known:", timeseries.KnownMember(p, fmt.Sprintf("s%d", i))) != nil
			if exists == 1 && !listed {
				t.Errorf("%s exists but is not listed", key)
			}
		}
	}
}
