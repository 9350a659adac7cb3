// Package tracktest checks, for the middlewares' tests, the durations a
// middleware recorded against the durations its handlers slept.
package tracktest

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/timeseries"
)

// A Sleeper makes handlers sleep known times and keeps the most any of
// them overslept: the scheduling slack of the machine the test runs on.
type Sleeper struct {
	Sleeps []time.Duration
	over   atomic.Int64
}

// NewSleeper returns a Sleeper of Sleeps(n).
func NewSleeper(n int) *Sleeper { return &Sleeper{Sleeps: Sleeps(n)} }

// Sleep sleeps the i-th time.
func (s *Sleeper) Sleep(i int) {
	start := time.Now()
	time.Sleep(s.Sleeps[i])
	over := int64(time.Since(start) - s.Sleeps[i])
	for cur := s.over.Load(); over > cur && !s.over.CompareAndSwap(cur, over); cur = s.over.Load() {
	}
}

// Overslept is the most a Sleep overslept.
func (s *Sleeper) Overslept() time.Duration { return time.Duration(s.over.Load()) }

// Run calls serve(i) for every sleep i, from four goroutines.
func (s *Sleeper) Run(serve func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(s.Sleeps); i = int(next.Add(1) - 1) {
				serve(i)
			}
		})
	}
	wg.Wait()
}

// Sleeps are n handler sleeps from 1 ms to 40 ms, spread evenly and
// shuffled by a fixed stride: known durations with distinct quantiles.
func Sleeps(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Millisecond + time.Duration(i*37%n)*39*time.Millisecond/time.Duration(n)
	}
	return out
}

// CheckQuantiles reads the durations of series name over the current and
// previous day from rec and checks that they
// count len(slept) requests and that their p50, p90 and p99 are within
// the accuracy of the exact quantiles of slept, plus slack: the most any
// handler overslept, as the handlers measured it, and overhead, the
// middleware's own time around the handler. It returns the largest
// relative error against the exact quantile of slept.
func CheckQuantiles(t *testing.T, rec *timeseries.Recorder, name string, slept []time.Duration, overslept, overhead time.Duration) float64 {
	t.Helper()
	d, err := rec.Store().LastDurations(context.Background(), name, 86400, 2)
	if err != nil {
		t.Fatal(err)
	}
	w := d.Window
	if w.Count() != uint64(len(slept)) {
		t.Fatalf("%s: %d durations, want %d", name, w.Count(), len(slept))
	}
	sorted := slices.Clone(slept)
	slices.Sort(sorted)
	a := w.Mapping().Accuracy()
	worst := 0.0
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := sorted[Rank(q, len(sorted))-1]
		got := w.Quantile(q)
		// Each request took its sleep plus at most overslept+overhead,
		// so the exact quantile of what was measured lies in [exact,
		// exact+slack]; the histogram's is within a of that.
		lo := time.Duration(float64(exact) * (1 - a))
		hi := time.Duration(float64(exact+overslept+overhead) * (1 + a))
		if got < lo || got > hi {
			t.Errorf("%s: p%g = %v, want within [%v, %v] (slept %v, overslept up to %v)", name, q*100, got, lo, hi, exact, overslept)
		}
		worst = max(worst, math.Abs(float64(got-exact))/float64(exact))
	}
	return worst
}

// Rank is the nearest rank of quantile q among n sorted values, counting
// from 1: the ⌈q·n⌉-th smallest, at least the first. The tests' exact
// quantile of n durations is the Rank(q, n)-th smallest.
func Rank(q float64, n int) int {
	return min(max(int(math.Ceil(q*float64(n))), 1), n)
}

// DefaultPrecisions are the precisions of a zero timeseries.Schema.
func DefaultPrecisions() []int {
	s, err := timeseries.Schema{}.Normalize()
	if err != nil {
		panic(err)
	}
	return s.Precisions
}

// The fields of a durations hash that are not bins (docs/durations.md).
const fieldCount, fieldSum, fieldMin, fieldMax = "n", "s", "min", "max"

// LatTotals adds up, over every durations hash of series name at
// precision p, the count fields n and the bins; do runs a command on the
// node serving the series' count key (one server: any).
func LatTotals(t *testing.T, do func(key, cmd string, args ...any) any, p int, name string) (n, bins int64) {
	t.Helper()
	// A bucket's key is the series' key prefix and the bucket's start.
	prefix, ok := timeseries.Schema{}.DurationKey(p, name, 0)
	if !ok {
		t.Fatalf("%q has no lat keys", name)
	}
	prefix = strings.TrimSuffix(prefix, "0")
	count := timeseries.Schema{}.CountKey(p, name)
	keys, err := redis.Strings(do(count, "KEYS", globQuote(prefix)+"*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		m, err := redis.Int64Map(do(count, "HGETALL", k), nil)
		if err != nil {
			t.Fatal(err)
		}
		for f, v := range m {
			switch f {
			case fieldCount:
				n += v
			case fieldSum, fieldMin, fieldMax:
			default:
				bins += v
			}
		}
	}
	return n, bins
}

// CheckLat checks that series name's durations count want requests at
// each of precisions, by n and by bins. A request's duration is recorded
// just after its hits, so it may reach Redis one flush later than they
// do: CheckLat waits up to 10 s for a count still short of want, and
// fails at once on one over it.
func CheckLat(t *testing.T, do func(key, cmd string, args ...any) any, precisions []int, name string, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range precisions {
		for {
			n, bins := LatTotals(t, do, p, name)
			if n == want && bins == want {
				break
			}
			if n > want || bins > want || time.Now().After(deadline) {
				t.Errorf("%s at precision %d: durations n=%d, bins %d, want %d", name, p, n, bins, want)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// globQuote quotes what KEYS patterns treat specially.
func globQuote(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(s)
}

// NewRecorder returns a Recorder over pool, closed when the test ends.
// Unset, cfg's precisions are 5 s and 1 day, and its OnError fails the
// test.
func NewRecorder(t testing.TB, pool timeseries.Pool, cfg timeseries.Config) *timeseries.Recorder {
	t.Helper()
	cfg.Pool = pool
	if cfg.Schema.Precisions == nil {
		cfg.Schema.Precisions = []int{5, 86400}
	}
	if cfg.OnError == nil {
		cfg.OnError = func(err error) { t.Errorf("recorder: %v", err) }
	}
	rec, err := timeseries.NewRecorder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), harness.Hang)
		defer cancel()
		_ = rec.Close(ctx)
	})
	return rec
}
