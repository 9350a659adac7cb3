package timeseries_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// fixedClock is a clock standing still at one second.
type fixedClock struct{ at time.Time }

func (c fixedClock) Now() time.Time { return c.at }

// readNow is the store's clock in these tests: inside the minute bucket
// 1700000040 and the day bucket 1699920000.
var readNow = time.Unix(1700000045, 0)

// readStore reads the series under prefix in p by a clock standing still
// at readNow.
func readStore(t testing.TB, p timeseries.Pool, prefix string) *timeseries.Store {
	s, err := timeseries.NewStore(p, timeseries.Schema{Prefix: prefix}, fixedClock{readNow})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// visitorIDs are the ids lo..hi-1 as PFADD arguments.
func visitorIDs(lo, hi int) []any {
	var out []any
	for i := lo; i < hi; i++ {
		out = append(out, fmt.Sprintf("visitor-%d", i))
	}
	return out
}

// seed PFADDs ids into one bucket of name's visitors at precision, as the
// write path does.
func seed(t *testing.T, do func(key string, args ...any) (any, error), s *timeseries.Store, name string, precision int, bucket int64, ids []any) string {
	t.Helper()
	key, ok := s.Schema().VisitorKey(precision, name, bucket)
	if !ok {
		t.Fatalf("%q keeps no visitors", name)
	}
	if _, err := do(key, append([]any{key}, ids...)...); err != nil {
		t.Fatal(err)
	}
	return key
}

// near reports whether an estimate is within 2 % of the truth, four
// times HyperLogLog's standard error.
func near(got int64, want int) bool {
	return math.Abs(float64(got)-float64(want)) <= 0.02*float64(want)
}

// overlapping seeds 12 minute buckets ending with the current one: bucket
// i holds visitors 50i..50i+99, so each shares 50 with the next; 650
// distinct in all, 1200 by the sum of the buckets. A bucket just before
// and one just after the window hold visitors of their own.
func overlapping(t *testing.T, do func(key string, args ...any) (any, error), s *timeseries.Store, name string) (from, to int64, keys []any) {
	t.Helper()
	to = timeseries.BucketStart(readNow.Unix(), 60)
	from = to - 11*60
	for i := range 12 {
		keys = append(keys, seed(t, do, s, name, 60, from+int64(i)*60, visitorIDs(50*i, 50*i+100)))
	}
	seed(t, do, s, name, 60, from-60, visitorIDs(5000, 5400))
	seed(t, do, s, name, 60, to+60, visitorIDs(6000, 6400))
	return from, to, keys
}

func TestVisitors(t *testing.T) {
	srv := redistest.Start(t)
	do := func(key string, args ...any) (any, error) { return srv.Do("PFADD", args...), nil }
	s := readStore(t, srv.Pool(), "uq:")
	ctx := context.Background()
	from, to, keys := overlapping(t, do, s, "hits")

	t.Run("window is the union", func(t *testing.T) {
		u, err := s.LastVisitors(ctx, "hits", 60, 12)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := redis.Int64(srv.Do("PFCOUNT", keys...), nil)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, b := range u.Buckets {
			sum += b.Count
		}
		if u.Window != direct || !near(u.Window, 650) {
			t.Errorf("window %d visitors; PFCOUNT of the 12 keys says %d, 650 were seeded", u.Window, direct)
		}
		if u.Window == sum || !near(sum, 1200) {
			t.Errorf("window %d, sum of buckets %d: the window must be the union, not the sum (1200)", u.Window, sum)
		}
	})
	t.Run("per bucket", func(t *testing.T) {
		u, err := s.Visitors(ctx, "hits", 60, from-30, to+30)
		if err != nil {
			t.Fatal(err)
		}
		if len(u.Buckets) != 12 || u.Precision != 60 {
			t.Fatalf("%d buckets at %d, want 12 at 60", len(u.Buckets), u.Precision)
		}
		for i, b := range u.Buckets {
			if b.Start != from+int64(i)*60 || !near(b.Count, 100) {
				t.Errorf("bucket %d: %+v, want start %d with 100 visitors", i, b, from+int64(i)*60)
			}
		}
		if !near(u.Window, 650) {
			t.Errorf("window %d: the buckets outside [from, to] must not count", u.Window)
		}
	})
	t.Run("empty buckets", func(t *testing.T) {
		hour := timeseries.BucketStart(readNow.Unix(), 3600)
		u, err := s.Visitors(ctx, "quiet", 3600, hour-7200, hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(u.Buckets) != 3 || u.Window != 0 || u.Buckets[0].Count != 0 {
			t.Errorf("a series without visitors: %+v", u)
		}
	})
	t.Run("today", func(t *testing.T) {
		day := timeseries.BucketStart(readNow.Unix(), 86400)
		seed(t, do, s, "hits", 86400, day, visitorIDs(0, 300))
		seed(t, do, s, "hits", 86400, day-86400, visitorIDs(1000, 2000))
		got, err := s.CurrentVisitors(ctx, []string{"hits", "quiet", "a}b"}, 86400)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !near(got["hits"], 300) || got["quiet"] != 0 {
			t.Errorf("today's visitors %v, want hits ≈ 300, quiet 0, a}b left out", got)
		}
	})
}

func TestVisitorsErrors(t *testing.T) {
	s := readStore(t, &redis.Pool{}, "") // every case fails before Redis is asked
	ctx := context.Background()
	const most = timeseries.MaxVisitorBuckets
	var perr *timeseries.PrecisionError
	var uerr *timeseries.VisitorPrecisionError
	tests := []struct {
		name string
		read func() error
		want func(error) bool
	}{
		{"5 s keeps none", func() error { _, err := s.LastVisitors(ctx, "hits", 5, 10); return err },
			func(err error) bool {
				return errors.As(err, &uerr) && errors.Is(err, timeseries.ErrNoVisitors) && !errors.As(err, &perr)
			}},
		{"precision not in the schema", func() error { _, err := s.LastVisitors(ctx, "hits", 7, 10); return err },
			func(err error) bool { return errors.As(err, &perr) && !errors.Is(err, timeseries.ErrNoVisitors) }},
		{"braces", func() error { _, err := s.LastVisitors(ctx, "a}b", 60, 10); return err },
			func(err error) bool { return errors.Is(err, timeseries.ErrNoVisitors) && !errors.As(err, &uerr) }},
		{"too many buckets", func() error { _, err := s.Visitors(ctx, "hits", 60, 60, 60*(most+1)); return err },
			func(err error) bool { return errors.Is(err, timeseries.ErrRangeTooLarge) }},
		{"n = 0", func() error { _, err := s.LastVisitors(ctx, "hits", 60, 0); return err },
			func(err error) bool { return err != nil }},
		{"n above the bound", func() error { _, err := s.LastVisitors(ctx, "hits", 60, most+1); return err },
			func(err error) bool { return err != nil }},
		{"today at 5 s", func() error { _, err := s.CurrentVisitors(ctx, []string{"hits"}, 5); return err },
			func(err error) bool { return errors.As(err, &uerr) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.read(); !tt.want(err) {
				t.Errorf("got %v", err)
			}
		})
	}
}
