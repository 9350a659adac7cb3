package timeseries_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/race"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// The memory of one route at full depth, measured: 6 precisions × 120
// buckets, 200 requests/s of log-normal durations (median 20 ms, σ = 1),
// written through the recorder's ledger, batches and flush script on a
// manual clock, then MEMORY USAGE of every key of the route (count and
// lat hashes), at accuracy 5, 2 and 1 %. Each bucket's bin counts are
// drawn as Poisson(N·P_b), N = 200·precision, P_b the chance of bin b:
// a day's 17 million requests without recording them one by one.
func TestRouteMemoryAtFullDepth(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 720 buckets per accuracy")
	}
	race.SkipMeasurement(t)
	// What keys take in memory does not depend on the log: without AOF's
	// fsync on every write, the thousands of flushes cost far less.
	srv := redistest.StartWith(t, redistest.Options{Args: []string{"--appendonly", "no"}})
	const route = "GET /posts/:id"
	var table []string
	for _, acc := range []float64{0.05, 0.02, 0.01} {
		srv.FlushAll()
		var row []string
		total := int64(0)
		for _, p := range series.DefaultPrecisions {
			fillRoute(t, srv, route, p, acc)
			b := routeBytes(t, srv, route, p)
			total += b
			row = append(row, fmt.Sprintf("%8d", b))
		}
		table = append(table, fmt.Sprintf("%4.0f %%  %s  %9d B = %5.0f KiB", acc*100, strings.Join(row, " "), total, float64(total)/1024))
		if acc == 0.05 && total > 512<<10 {
			t.Errorf("a route takes %d bytes at 5 %%, over the 512 KiB budget", total)
		}
	}
	t.Logf("bytes per route (count and lat hashes), by precision:\naccuracy      5 s    1 min    5 min      1 h      5 h    1 day      total\n%s", strings.Join(table, "\n"))
}

// fillRoute writes 120 buckets of one precision for route.
func fillRoute(t *testing.T, srv *redistest.Server, route string, p int, acc float64) {
	t.Helper()
	// The oldest bucket is the current one: Redis expires keys by the real
	// clock, and a 5 s bucket's key lives 605 s from its start, too short
	// for a fill that began 119 buckets back on a loaded machine.
	start := series.BucketStart(testnow.Now().Unix(), p)
	clock := timeseries.NewManualClock(time.Unix(start, 0))
	r := newRecorder(t, srv, timeseries.Config{
		Clock: clock, FlushInterval: time.Hour, DurationAccuracy: acc,
		Schema: timeseries.Schema{Precisions: []int{p}}, MaxPendingAge: 1000 * time.Hour,
	})
	c := mustCounter(t, r, route)
	m := timeseries.MappingOf(r)
	lows, probs := binProbabilities(m)
	rng := rand.New(rand.NewPCG(uint64(p), uint64(acc*1000)))
	n := 200 * float64(p)
	for range 120 {
		for s, pb := range probs {
			if k := poisson(rng, n*pb); k > 0 {
				r.RecordDurations(c, lows[s], k)
			}
		}
		flush(t, r)
		clock.Advance(time.Duration(p) * time.Second)
	}
}

// binProbabilities gives, per slot of m, its smallest duration and the
// chance that a duration of the route's distribution falls in it.
func binProbabilities(m *latency.Mapping) (lows []time.Duration, probs []float64) {
	mu := math.Log(float64(20 * time.Millisecond))
	cdf := func(d time.Duration) float64 { return 0.5 * math.Erfc(-(math.Log(float64(d))-mu)/math.Sqrt2) }
	lows = make([]time.Duration, m.Slots())
	for s := 1; s < m.Slots(); s++ { // the first duration of slot s
		a, b := time.Duration(1), time.Duration(math.MaxInt64/2)
		for a < b {
			if mid := a + (b-a)/2; m.Slot(mid) >= s {
				b = mid
			} else {
				a = mid + 1
			}
		}
		lows[s] = a
	}
	probs = make([]float64, m.Slots())
	for s := range probs {
		hi := 1.0
		if s+1 < len(lows) {
			hi = cdf(lows[s+1])
		}
		lo := 0.0
		if s > 0 {
			lo = cdf(lows[s])
		}
		probs[s] = hi - lo
	}
	return lows, probs
}

// poisson draws from Poisson(mean): by its normal approximation for a
// large mean, by counting arrivals for a small one.
func poisson(rng *rand.Rand, mean float64) int64 {
	if mean > 1000 {
		return max(0, int64(math.Round(mean+math.Sqrt(mean)*rng.NormFloat64())))
	}
	var k int64
	for t := rng.ExpFloat64(); t < mean; t += rng.ExpFloat64() {
		k++
	}
	return k
}

// routeBytes is MEMORY USAGE summed over the route's count hash and lat
// hashes at precision p.
func routeBytes(t *testing.T, srv *redistest.Server, route string, p int) int64 {
	t.Helper()
	prefix, _ := series.Keys{}.LatKeyPrefix(p, route)
	keys, err := redis.Strings(srv.Do("KEYS", globEscape(prefix)+"*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 120 {
		t.Fatalf("precision %d: %d lat keys, want 120", p, len(keys))
	}
	keys = append(keys, series.Keys{}.CountKey(p, route))
	var total int64
	for _, k := range keys {
		b, err := redis.Int64(srv.Do("MEMORY", "USAGE", k, "SAMPLES", 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		total += b
	}
	return total
}
