package fromstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// rate is the traffic's true mean hits per minute at t: a daily shape
// and quieter weekends.
func rate(t time.Time) float64 {
	h := float64(t.Unix()%86400) / 3600
	r := 20 * math.Exp(0.7*math.Cos(2*math.Pi*(h-15)/24))
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		r *= 0.7
	}
	return r
}

// poisson draws a count of mean mu as a sum of exact small draws.
func poisson(rng *rand.Rand, mu float64) int {
	n := 0
	for mu > 0 {
		m := math.Min(mu, 30)
		mu -= m
		l, p := math.Exp(-m), rng.Float64()
		for p > l {
			p *= rng.Float64()
			n++
		}
	}
	return n
}

// record writes three weeks of traffic through a recorder whose clock
// ends at the real time: hourly batches for the old days, then every
// 5 minutes for the last 12 hours, whose last 3 closed buckets are an
// outage. It returns the store and the outage's first bucket.
func record(t *testing.T, srv *redistest.Server, name string) (*timeseries.Store, time.Time) {
	t.Helper()
	now := time.Now().UTC()
	current := now.Truncate(5 * time.Minute)
	dense := current.Add(-12 * time.Hour)
	outage := current.Add(-15 * time.Minute)
	clock := timeseries.NewManualClock(now.Add(-21 * 24 * time.Hour).Truncate(time.Hour))
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	c, err := rec.Counter(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(31, 0))
	step := time.Hour
	for clock.Now().Before(now) {
		at := clock.Now()
		if !at.Before(dense) {
			step = 5 * time.Minute
		}
		mid := at.Add(step / 2)
		if mid.After(now) {
			mid = now
		}
		clock.Advance(mid.Sub(at))
		hits := poisson(rng, rate(mid)*step.Minutes())
		if !at.Before(outage) && at.Before(current) {
			hits = 0
		}
		for range hits {
			c.Inc()
		}
		if err := rec.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		end := at.Add(step)
		if end.After(now) {
			end = now
		}
		clock.Advance(end.Sub(clock.Now()))
		if !clock.Now().After(at) {
			break
		}
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return rec.Store(), outage
}

// A series written by the recorder forecasts from Redis: the 5 min
// precision borrows its day from the 1 h series and its week from the
// 1 d one, expects what the traffic's rate says, and flags the outage.
func TestFitFromRedis(t *testing.T) {
	srv := redistest.Start(t)
	store, outage := record(t, srv, "GET /api/orders")
	ctx := context.Background()

	fd, err := fromstore.Fit(ctx, store, "GET /api/orders", 300, forecast.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s := fd.Model.Seasons; len(s) != 2 || s[0].Source != "1h" || s[1].Source != "1d" {
		t.Fatalf("seasons %+v, want the day from 1h and the week from 1d", s)
	}
	if n := len(fd.History); n != fromstore.Window {
		t.Fatalf("%d buckets of history, want %d", n, fromstore.Window)
	}
	var dropped bool
	for _, f := range fd.Flags {
		if !f.Bucket.Before(outage) && (f.Kind == forecast.Drop || f.Kind == forecast.LevelShift) {
			dropped = true
		}
	}
	if !dropped {
		t.Errorf("the outage from %v is not flagged: %+v", outage, fd.Flags)
	}
	// Before the outage, the one-step expectations follow the true rate.
	var rel float64
	for _, p := range fd.History[60:110] {
		want := rate(p.Time.Add(150*time.Second)) * 5
		rel += math.Abs(p.Expected-want) / want / 50
	}
	t.Logf("one-step expectations within %.3f of the true rate on average; flags %d", rel, len(fd.Flags))
	if rel > 0.15 {
		t.Errorf("expectations stray %.2f from the true rate on average", rel)
	}
	next := fd.Forecast(1)[0]
	if !next.Time.Equal(outage.Add(15 * time.Minute)) {
		t.Errorf("forecast starts at %v, want the current bucket %v", next.Time, outage.Add(15*time.Minute))
	}

	// Read with others in one batch, it fits the same.
	all, err := fromstore.FitAll(ctx, store, []string{"GET /api/orders", "never written"}, 300, forecast.Config{FlagsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all["GET /api/orders"].Err != nil || len(all["GET /api/orders"].Fitted.Flags) != len(fd.Flags) {
		t.Errorf("FitAll: %+v, want the one series with %d flags", all, len(fd.Flags))
	}

	// The same series at 1 h borrows only the week.
	fh, err := fromstore.Fit(ctx, store, "GET /api/orders", 3600, forecast.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s := fh.Model.Seasons; s[0].Source != "own" || s[1].Source != "1d" {
		t.Errorf("1 h seasons %+v", s)
	}
}

func TestFitFromRedisErrors(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := fromstore.Fit(ctx, store, "nope", 60, forecast.Config{}); !errors.Is(err, timeseries.ErrUnknownSeries) {
		t.Errorf("unknown series: %v", err)
	}
	if _, err := fromstore.Fit(ctx, store, "nope", 60, forecast.Config{Kind: forecast.Latency}); err == nil {
		t.Error("latency from count hashes accepted")
	}
	srv.Stop()
	if _, err := fromstore.Fit(ctx, store, "x", 60, forecast.Config{}); err == nil {
		t.Error("no error with Redis down")
	}
}

// cpuTime is the process's CPU time so far; the machine is shared, so
// wall time per operation says more about the neighbours than the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// seed writes n series' last 121 buckets at 1 min, 1 h and 1 d straight
// into the count hashes, as a recorder would have; the noise is normal,
// which at these volumes is near enough.
func seed(tb testing.TB, srv *redistest.Server, n int, now time.Time) []string {
	tb.Helper()
	conn := srv.Pool().Get()
	defer conn.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("GET /route/%d", i)
		for _, p := range []int{60, 3600, 86400} {
			key := fmt.Sprintf("count:%d:%s", p, names[i])
			args := []any{key}
			cur := now.Unix() / int64(p) * int64(p)
			for k := int64(0); k <= fromstore.Window; k++ {
				t := cur - k*int64(p)
				mu := rate(time.Unix(t, 0)) * float64(p) / 60
				args = append(args, t, int(math.Max(0, math.Round(mu+math.Sqrt(mu)*rng.NormFloat64()))))
			}
			if err := conn.Send("HSET", args...); err != nil {
				tb.Fatal(err)
			}
			if err := conn.Send("ZADD", "known:", 0, fmt.Sprintf("%d:%s", p, names[i])); err != nil {
				tb.Fatal(err)
			}
		}
		// Replies are read every 50 series: all at once, they can take
		// longer than the read timeout on a busy machine.
		if i%50 == 49 || i == n-1 {
			if _, err := redis.DoWithTimeout(conn, harness.Hang, ""); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return names
}

// Every series of an app with 500 series at 1 min, each with its 1 h and
// 1 d series, read in one round trip per precision and scanned for
// flags: the CPU of the process, and of the Redis server answering the
// reads. "fresh" is FitAll, which reads the three precisions every time;
// "scanner" a Scanner scanning again within the hour, which reads the
// 1 h and 1 d series once per closed bucket of theirs; "keep" that
// Scanner keeping scores and incidents in Redis (one read of the
// incidents kept per scan, the scores sent once per settled bucket);
// "keep-restart" a Scanner with Keep on its first scan, which reads the
// kept scores of every bucket of the window: the worst scan of all.
func BenchmarkFitAll500(b *testing.B) {
	srv := redistest.Start(b)
	now := time.Now()
	names := seed(b, srv, 500, now)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, timeseries.NewManualClock(now))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sc := &fromstore.Scanner{Store: store}
	kept := &fromstore.Scanner{Store: store, Keep: true}
	for _, bc := range []struct {
		name string
		scan func() (map[string]fromstore.Result, error)
	}{
		{"fresh", func() (map[string]fromstore.Result, error) {
			return fromstore.FitAll(ctx, store, names, 60, forecast.Config{FlagsOnly: true})
		}},
		{"scanner", func() (map[string]fromstore.Result, error) {
			return sc.FitAll(ctx, names, 60, forecast.Config{FlagsOnly: true})
		}},
		{"keep", func() (map[string]fromstore.Result, error) {
			return kept.FitAll(ctx, names, 60, forecast.Config{FlagsOnly: true})
		}},
		{"keep-restart", func() (map[string]fromstore.Result, error) {
			return (&fromstore.Scanner{Store: store, Keep: true}).FitAll(ctx, names, 60, forecast.Config{FlagsOnly: true})
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if _, err := bc.scan(); err != nil { // a Scanner's first scan reads all
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu, redisCPU, reads, scripts := cpuTime(), srv.CPU(), srv.Calls("HMGET"), srv.Calls("EVALSHA")
			for b.Loop() {
				all, err := bc.scan()
				if err != nil || len(all) != len(names) {
					b.Fatalf("%d fits, %v", len(all), err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/500series")
			b.ReportMetric(float64((srv.CPU()-redisCPU).Microseconds())/float64(b.N)/1000, "redis-cpu-ms/500series")
			b.ReportMetric(float64(srv.Calls("HMGET")-reads)/float64(b.N), "HMGET/scan")
			b.ReportMetric(float64(srv.Calls("EVALSHA")-scripts)/float64(b.N), "EVALSHA/scan")
		})
	}
}
