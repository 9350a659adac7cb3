package timeseries_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// recent is the start of the current minute: lat keys expire 121
// buckets after their bucket by Redis's own clock, so a test clock far
// in the past would see them go at once.
func recent() time.Time { return time.Unix(testnow.Now().Unix()/60*60, 0) }

// latTotals adds up, over every lat key of one series at one precision,
// the count fields n and the bins, as do reads a command on the node of
// the series' count key.
func latTotals(t *testing.T, do func(key, cmd string, args ...any) any, p int, name string) (n, bins int64) {
	t.Helper()
	prefix, ok := series.Keys{}.LatKeyPrefix(p, name)
	if !ok {
		t.Fatalf("%q has no lat keys", name)
	}
	countKey := series.Keys{}.CountKey(p, name)
	keys, err := redis.Strings(do(countKey, "KEYS", globEscape(prefix)+"*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		m, err := redis.StringMap(do(countKey, "HGETALL", k), nil)
		if err != nil {
			t.Fatal(err)
		}
		for f, v := range m {
			x, _ := strconv64(v)
			switch f {
			case latency.FieldCount:
				n += x
			case latency.FieldSum, latency.FieldMin, latency.FieldMax:
			default:
				bins += x
			}
		}
	}
	return n, bins
}

func strconv64(s string) (int64, error) {
	var v int64
	_, err := fmt.Sscan(s, &v)
	return v, err
}

// assertLat checks that at every precision the durations of name count
// want requests: n and the bins both.
func assertLat(t *testing.T, do func(key, cmd string, args ...any) any, name string, want int64) {
	t.Helper()
	for _, p := range series.DefaultPrecisions {
		if n, bins := latTotals(t, do, p, name); n != want || bins != want {
			t.Errorf("%s at precision %d: durations n=%d, bins sum %d, want %d", name, p, n, bins, want)
		}
	}
}

func serverDo(srv *redistest.Server) func(key, cmd string, args ...any) any {
	return func(_, cmd string, args ...any) any { return srv.Do(cmd, args...) }
}

// drawn are n log-normal durations, median 20 ms, σ = 1, within the
// default tracked range, from a fixed seed.
func drawn(n int, seed uint64) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]time.Duration, n)
	for i := range out {
		d := time.Duration(float64(20*time.Millisecond) * math.Exp(rng.NormFloat64()))
		out[i] = min(max(d, 10*time.Microsecond), 10*time.Minute)
	}
	return out
}

// exactQuantile is the nearest-rank quantile of ds, latency.Rank's rule.
func exactQuantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[latency.Rank(q, uint64(len(s)))-1]
}

// quantileErrors checks h's p50, p90 and p99 against the exact ones of
// ds, within the accuracy, and returns the largest relative error.
func quantileErrors(t *testing.T, what string, h *latency.Histogram, ds []time.Duration, accuracy float64) float64 {
	t.Helper()
	worst := 0.0
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact, got := exactQuantile(ds, q), h.Quantile(q)
		rel := math.Abs(float64(got-exact)) / float64(exact)
		worst = max(worst, rel)
		if rel > accuracy {
			t.Errorf("%s: p%g = %v, exact %v: error %.2f%% over %.0f%%", what, q*100, got, exact, rel*100, accuracy*100)
		}
	}
	return worst
}

// A recorder fed known durations on a manual clock: every 5 s bucket
// holds exactly the histogram of its durations, bin for bin; the minute
// is the merge of its twelve 5 s buckets; the quantiles of a bucket and
// of the window are within the accuracy of the exact ones, at 5 % and 1 %.
func TestDurationsExactPerBucket(t *testing.T) {
	srv := redistest.Start(t)
	for _, acc := range []float64{0, 0.01} {
		t.Run(fmt.Sprintf("accuracy=%g", acc), func(t *testing.T) {
			srv.FlushAll()
			start := recent()
			clock := timeseries.NewManualClock(start)
			r := newRecorder(t, srv, timeseries.Config{Clock: clock, FlushInterval: time.Hour, DurationAccuracy: acc})
			hits := mustCounter(t, r, "hits")
			m := timeseries.MappingOf(r)
			all := drawn(60*50, uint64(acc*1000)+1)
			want := make([]*latency.Histogram, 12) // per 5 s bucket
			for sec := range 60 {
				for _, d := range all[sec*50 : sec*50+50] {
					r.RecordDuration(d, hits)
					if want[sec/5] == nil {
						want[sec/5] = latency.NewHistogram(m)
					}
					want[sec/5].Add(d)
				}
				clock.Advance(time.Second)
			}
			flush(t, r)
			ctx := context.Background()
			five, err := r.Store().Durations(ctx, "hits", 5, start.Unix(), start.Unix()+55)
			if err != nil {
				t.Fatal(err)
			}
			if len(five.Buckets) != 12 {
				t.Fatalf("%d buckets of 5 s, want 12", len(five.Buckets))
			}
			for i, b := range five.Buckets {
				if !b.Hist.Equal(want[i]) {
					t.Errorf("bucket %d: %d durations, not bin for bin those recorded (%d)", i, b.Hist.Count(), want[i].Count())
				}
			}
			minute, err := r.Store().Durations(ctx, "hits", 60, start.Unix(), start.Unix())
			if err != nil {
				t.Fatal(err)
			}
			if !minute.Buckets[0].Hist.Equal(five.Window) {
				t.Error("the minute is not the merge of its twelve 5 s buckets")
			}
			accuracy := m.Accuracy()
			worst := quantileErrors(t, "window", five.Window, all, accuracy)
			for i, b := range five.Buckets {
				worst = max(worst, quantileErrors(t, fmt.Sprint("bucket ", i), b.Hist, all[i*250:i*250+250], accuracy))
			}
			t.Logf("accuracy %g: largest quantile error %.2f%%", accuracy, worst*100)
			assertLat(t, serverDo(srv), "hits", 3000)
			assertSums(t, srv, "", "hits", 3000)
		})
	}
}

// Two recorders on one Redis: the window is the histogram of the
// durations of both.
func TestDurationsTwoRecordersMerge(t *testing.T) {
	srv := redistest.Start(t)
	start := recent()
	all := drawn(4000, 3)
	var want *latency.Histogram
	var rs []*timeseries.Recorder
	for i := range 2 {
		clock := timeseries.NewManualClock(start)
		r := newRecorder(t, srv, timeseries.Config{Clock: clock, FlushInterval: time.Hour})
		rs = append(rs, r)
		c := mustCounter(t, r, "GET /x")
		if i == 0 {
			want = latency.NewHistogram(timeseries.MappingOf(r))
		}
		for j, d := range all[i*2000 : i*2000+2000] {
			r.RecordDuration(d, c)
			want.Add(d)
			if j%100 == 99 {
				clock.Advance(time.Second)
			}
		}
		flush(t, r)
	}
	got, err := rs[0].Store().Durations(context.Background(), "GET /x", 60, start.Unix(), start.Unix())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Window.Equal(want) {
		t.Errorf("merged window: %d durations, not bin for bin the %d recorded", got.Window.Count(), want.Count())
	}
	worst := quantileErrors(t, "two recorders", got.Window, all, 0.05)
	t.Logf("two recorders: largest quantile error %.2f%%", worst*100)
}

// Names whose braces would put their lat keys in another slot than their
// count key keep their hits and record no durations; others do.
func TestDurationsBraceNames(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	names := map[string]bool{"a}b": false, "x{}y": false, "x{y}": true, "a{b": true, "plain": true}
	for name := range names {
		r.RecordDuration(time.Millisecond, mustCounter(t, r, name))
	}
	flush(t, r)
	for name, timed := range names {
		assertSums(t, srv, "", name, 1)
		prefix, ok := series.Keys{}.LatKeyPrefix(5, name)
		if ok != timed {
			t.Errorf("%q: LatKeyPrefix ok=%v, want %v", name, ok, timed)
			continue
		}
		keys, _ := redis.Strings(srv.Do("KEYS", globEscape(prefix)+"*"), nil)
		if timed && len(keys) != 1 {
			t.Errorf("%q: lat keys %v, want one", name, keys)
		}
		if _, err := r.Store().LastDurations(context.Background(), name, 5, 1); (err == nil) != timed {
			t.Errorf("%q: read error %v, want one only when untimed", name, err)
		}
	}
	all, _ := redis.Strings(srv.Do("KEYS", "lat:*"), nil)
	if len(all) != 3*len(series.DefaultPrecisions) {
		t.Errorf("lat keys %v, want those of x{y}, a{b and plain only", all)
	}
}

// globEscape quotes the characters KEYS patterns treat specially.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(s)
}

// Each lat key expires 121 buckets after its bucket starts.
func TestDurationsExpire(t *testing.T) {
	srv := redistest.Start(t)
	start := recent()
	r := newRecorder(t, srv, timeseries.Config{Clock: timeseries.NewManualClock(start), FlushInterval: time.Hour})
	r.RecordDuration(time.Millisecond, mustCounter(t, r, "hits"))
	flush(t, r)
	for _, p := range series.DefaultPrecisions {
		b := series.BucketStart(start.Unix(), p)
		key, _ := series.Keys{}.LatKey(p, "hits", b)
		at, _ := redis.Int64(srv.Do("EXPIRETIME", key), nil)
		if want := b + 121*int64(p); at != want {
			t.Errorf("%s expires at %d, want %d", key, at, want)
		}
	}
}

// Durations off: hits only, no lat key, and the reader says so.
func TestDurationsDisabled(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{DisableDurations: true, FlushInterval: time.Hour})
	r.RecordDuration(time.Millisecond, mustCounter(t, r, "hits"))
	flush(t, r)
	assertSums(t, srv, "", "hits", 1)
	if keys, _ := redis.Strings(srv.Do("KEYS", "lat:*"), nil); len(keys) != 0 {
		t.Errorf("lat keys %v with durations off", keys)
	}
	if _, err := r.Store().LastDurations(context.Background(), "hits", 5, 1); err == nil {
		t.Error("durations read with durations off")
	}
	for _, acc := range []float64{0.005, 0.2} {
		pool := srv.Pool()
		if r, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, DurationAccuracy: acc}); err == nil {
			r.Close(canceled())
			t.Errorf("accuracy %g accepted", acc)
		}
	}
}

// A lat key of another type refuses only its own durations.
func TestDurationsWrongTypeKey(t *testing.T) {
	srv := redistest.Start(t)
	start := recent()
	r := newRecorder(t, srv, timeseries.Config{Clock: timeseries.NewManualClock(start), FlushInterval: time.Hour})
	bad, _ := series.Keys{}.LatKey(60, "hits", series.BucketStart(start.Unix(), 60))
	srv.Do("SET", bad, "x")
	c := mustCounter(t, r, "hits")
	for range 20 {
		r.RecordDuration(time.Millisecond, c)
	}
	flush(t, r)
	assertSums(t, srv, "", "hits", 20)
	for _, p := range series.DefaultPrecisions {
		if p == 60 {
			if v, _ := redis.String(srv.Do("GET", bad), nil); v != "x" {
				t.Errorf("the foreign value became %q", v)
			}
			continue
		}
		if n, _ := latTotals(t, serverDo(srv), p, "hits"); n != 20 {
			t.Errorf("precision %d: %d durations, want 20", p, n)
		}
	}
	if h := r.Health(); h.LastDroppedKey != bad || h.DroppedIncrements != 0 || h.DroppedDurations != 4 || !h.RedisUp {
		t.Errorf("health %+v, want %s dropped: 20 durations at one precision of 6 (4), no hit increments", h, bad)
	}
}

// With durations a flush costs, per series and precision written, the
// hits' 2 commands plus 4 for the lat key (HMGET, HSET, HINCRBY of the
// sum, EXPIREAT), however many requests and bins: TestFlushCommandBudget
// records no durations and keeps its budget of 2.
func TestFlushCommandBudgetWithDurations(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{Clock: heldClock(), FlushInterval: time.Hour})
	var cs []*timeseries.Counter
	for _, n := range []string{"hits", "GET /posts/:id", "GET /other"} {
		cs = append(cs, mustCounter(t, r, n))
	}
	ds := drawn(10000, 9)
	for _, hits := range []int{10, 10000} {
		for i := range hits {
			r.RecordDuration(ds[i], cs...)
		}
		total, info := flushCommands(t, srv, r)
		sp := len(cs) * len(series.DefaultPrecisions)
		if budget := (2 + 4) * sp; total > budget {
			t.Errorf("%d requests: flush ran %d Redis commands, budget %d\n%s", hits, total, budget, info)
		}
		t.Logf("%d requests per series: %d commands for %d series×precisions", hits, total, sp)
	}
}
