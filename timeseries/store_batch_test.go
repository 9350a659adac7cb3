package timeseries_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// roundTripConn counts round trips on the wire: each time the client
// starts reading after it wrote, it waits for Redis once more.
type roundTripConn struct {
	net.Conn
	wrote bool
	trips *atomic.Int64
}

func (c *roundTripConn) Write(p []byte) (int, error) {
	c.wrote = true
	return c.Conn.Write(p)
}

func (c *roundTripConn) Read(p []byte) (int, error) {
	if c.wrote {
		c.wrote = false
		c.trips.Add(1)
	}
	return c.Conn.Read(p)
}

func countingPool(t testing.TB, srv *redistest.Server, trips *atomic.Int64) *redis.Pool {
	dial := func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if err != nil {
			return nil, err
		}
		return &roundTripConn{Conn: c, trips: trips}, nil
	}
	p := &redis.Pool{Dial: func() (redis.Conn, error) {
		return redis.Dial("tcp", srv.Addr, redis.DialNetDial(dial), redis.DialReadTimeout(2*time.Second))
	}}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestSamplesManyMatchesSamples: for every kind of range, the batch read
// returns exactly what one Samples call per series returns.
func TestSamplesManyMatchesSamples(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	rec := newRecorder(t, srv, timeseries.Config{Clock: clock, FlushInterval: time.Hour})
	names := []string{"hits", "GET /posts/:id", "status:2xx", "quiet"}
	// Series i gets i+1 hits every 7 s for 10 minutes; "quiet" gets one.
	for s := 0; s < 600; s += 7 {
		clock.Advance(t0.Add(time.Duration(s) * time.Second).Sub(clock.Now()))
		for i, n := range names[:3] {
			c := mustCounter(t, rec, n)
			for range i + 1 {
				c.Inc()
			}
		}
	}
	clock.Advance(t0.Add(300 * time.Second).Sub(clock.Now()))
	mustCounter(t, rec, "quiet").Inc()
	flush(t, rec)
	clock.Advance(t0.Add(10 * time.Minute).Sub(clock.Now()))

	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	from, to := t0.Unix()+60, t0.Unix()+240
	ranges := []struct {
		name string
		r    timeseries.Range
	}{
		{"open", timeseries.Range{}},
		{"from only", timeseries.Range{From: from}},
		{"to only", timeseries.Range{To: to}},
		{"closed", timeseries.Range{From: from, To: to}},
		{"closed, off bucket edges", timeseries.Range{From: from + 2, To: to + 3}},
		{"closed, zero-filled", timeseries.Range{From: from, To: to, FillZero: true}},
		{"open, zero-filled", timeseries.Range{FillZero: true}},
		{"wider than a listed window", timeseries.Range{From: t0.Unix() - 5*30000, To: to}},
		{"no bucket start inside", timeseries.Range{From: from + 1, To: from + 3, FillZero: true}},
	}
	ctx := context.Background()
	for _, p := range []int{5, 60, 86400} {
		for _, rc := range ranges {
			t.Run(fmt.Sprintf("%d/%s", p, rc.name), func(t *testing.T) {
				got, err := store.SamplesMany(ctx, names, p, rc.r)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(names) {
					t.Fatalf("got %d series, want %d", len(got), len(names))
				}
				for _, n := range names {
					want, err := store.Samples(ctx, n, p, rc.r)
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(got[n]) != fmt.Sprint(want) {
						t.Errorf("%s: SamplesMany = %v\nSamples = %v", n, got[n], want)
					}
				}
			})
		}
	}
	// The data is not trivial: the window holds hits of every busy series.
	got, _ := store.SamplesMany(ctx, names, 60, timeseries.Range{From: from, To: to})
	for i, n := range names[:3] {
		var sum int64
		for _, s := range got[n] {
			sum += s.Count
		}
		if sum == 0 || sum%int64(i+1) != 0 {
			t.Errorf("%s sums to %d in the window, want a positive multiple of %d", n, sum, i+1)
		}
	}
}

func TestSamplesManyUnknownAndInvalid(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	rec := newRecorder(t, srv, timeseries.Config{Clock: clock, FlushInterval: time.Hour})
	mustCounter(t, rec, "hits").Inc()
	flush(t, rec)
	// A hash with no known: entry is not a series (a cleaner removed it).
	srv.Do("HSET", "count:5:stray", t0.Unix(), 4)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	got, err := store.SamplesMany(ctx, []string{"hits", "stray", "never", "hits"}, 5, timeseries.Range{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "map[hits:[{1700000000 1}]]"; fmt.Sprint(got) != want {
		t.Errorf("SamplesMany = %v, want %s", got, want)
	}
	if got, err := store.SamplesMany(ctx, nil, 5, timeseries.Range{}); err != nil || len(got) != 0 {
		t.Errorf("no names: %v, %v; want an empty map", got, err)
	}
	if _, err := store.SamplesMany(ctx, []string{"hits"}, 7, timeseries.Range{}); !errors.Is(err, series.ErrUnknownPrecision) {
		t.Errorf("precision 7: err = %v, want ErrUnknownPrecision", err)
	}
	if _, err := store.SamplesMany(ctx, []string{"hits"}, 5, timeseries.Range{From: 10, To: 5}); err == nil {
		t.Error("from after to: no error")
	}
	huge := timeseries.Range{From: 5, To: 5 * (series.MaxSamples + 10), FillZero: true}
	if _, err := store.SamplesMany(ctx, []string{"hits"}, 5, huge); !errors.Is(err, series.ErrRangeTooLarge) {
		t.Errorf("huge zero-filled range: err = %v, want ErrRangeTooLarge", err)
	}
	if !store.Clock().Now().Equal(t0) {
		t.Errorf("Now = %v, want the store clock's %v", store.Clock().Now(), t0)
	}
}

// TestSamplesManyIsOneRoundTrip counts the times the client waits for
// Redis: once for fifty series, where a Samples loop waits fifty times.
func TestSamplesManyIsOneRoundTrip(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	rec := newRecorder(t, srv, timeseries.Config{Clock: clock, FlushInterval: time.Hour})
	var names []string
	for i := range 50 {
		n := fmt.Sprintf("route-%02d", i)
		names = append(names, n)
		mustCounter(t, rec, n).Inc()
	}
	flush(t, rec)
	var trips atomic.Int64
	store, err := timeseries.NewStore(countingPool(t, srv, &trips), timeseries.Schema{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, r := range []timeseries.Range{{}, {From: t0.Unix() - 600, To: t0.Unix(), FillZero: true}} {
		trips.Store(0)
		got, err := store.SamplesMany(ctx, names, 5, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 50 {
			t.Fatalf("got %d series, want 50", len(got))
		}
		if n := trips.Load(); n != 1 {
			t.Errorf("range %+v: %d round trips, want 1", r, n)
		}
	}
	trips.Store(0)
	for _, n := range names {
		if _, err := store.Samples(ctx, n, 5, timeseries.Range{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := trips.Load(); n != 50 {
		t.Errorf("a Samples loop took %d round trips, want 50 (the counter is wrong)", n)
	}
}

// BenchmarkReadManySeries reads the chart window (15 min of 5 s buckets,
// zero-filled) of 100 series from a real redis-server on loopback:
//
//   - SamplesMany: one round trip, only the window's buckets (HMGET);
//   - SamplesManyWholeHash: one round trip, whole hashes (HGETALL), as
//     with an open range;
//   - SamplesLoop: one Samples call, one round trip, per series.
//
// with hashes holding a whole day of buckets (no cleaner) or only the
// window. Run:
//
//	go test -run '^$' -bench ReadManySeries -count 5 ./timeseries/
func BenchmarkReadManySeries(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed")
	}
	srv := redistest.Start(b)
	for _, shape := range []struct {
		name   string
		prefix string
		span   int64 // seconds of history
	}{
		{"day", "day:", 86400},
		{"window", "win:", 900},
	} {
		schema := timeseries.Schema{Prefix: shape.prefix}
		clock := timeseries.NewManualClock(t0)
		rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Schema: schema, Clock: clock, FlushInterval: time.Hour, OnError: func(error) {}})
		if err != nil {
			b.Fatal(err)
		}
		var names []string
		for i := range 100 {
			names = append(names, fmt.Sprintf("GET /route/%03d", i))
		}
		// One hit every 30 s per series over the span.
		for s := int64(0); s < shape.span; s += 30 {
			clock.Advance(t0.Add(time.Duration(s) * time.Second).Sub(clock.Now()))
			for _, n := range names {
				c, _ := rec.Counter(n)
				c.Inc()
			}
			if s%3600 == 0 {
				if err := rec.Flush(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := rec.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		store, err := timeseries.NewStore(srv.Pool(), schema, clock)
		if err != nil {
			b.Fatal(err)
		}
		now := series.BucketStart(clock.Now().Unix(), 5)
		window := timeseries.Range{From: now - 179*5, To: now, FillZero: true}
		openEnded := timeseries.Range{From: now - 179*5, FillZero: true} // same samples, whole hashes read
		ctx := context.Background()
		b.Run(shape.name+"/SamplesMany", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := store.SamplesMany(ctx, names, 5, window); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(shape.name+"/SamplesManyWholeHash", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := store.SamplesMany(ctx, names, 5, openEnded); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(shape.name+"/SamplesLoop", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, n := range names {
					if _, err := store.Samples(ctx, n, 5, window); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
