package timeseries_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/race"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// The Redis memory of one series' visitors at full depth: 120 buckets
// at each unique precision, for a site of 200 requests/s from 20,000
// distinct visitors a day, written through the recorder's drain and
// PFADDs on a manual clock, then MEMORY USAGE of every key. A bucket of w
// seconds sees 200·w requests drawn from the day's visitors, so
// 20000·(1 − e^(−w/100)) of them distinct, on average: those are fed.
func TestVisitorMemoryAtFullDepth(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds 10 million visitor ids")
	}
	race.SkipMeasurement(t)
	// What keys take in memory does not depend on the log: without AOF's
	// fsync on every write, the thousands of flushes cost far less.
	srv := redistest.StartWith(t, redistest.Options{Args: []string{"--appendonly", "no"}})
	srv.Do("CONFIG", "SET", "appendonly", "no")
	var row []string
	var total int64
	defaults := series.DefaultVisitorPrecisions
	t.Cleanup(func() { series.DefaultVisitorPrecisions = defaults })
	for _, p := range defaults {
		series.DefaultVisitorPrecisions = []int{p}
		distinct := int(math.Round(20000 * (1 - math.Exp(-float64(p)/100))))
		fillVisitors(t, srv, p, distinct)
		b, enc := visitorBytes(t, srv, p)
		total += b
		row = append(row, fmt.Sprintf("%6d s: %5d distinct/bucket, 120 keys (%s), %8d B = %6.0f KiB", p, distinct, enc, b, float64(b)/1024))
	}
	t.Logf("visitor bytes per series, by precision:\n%s\ntotal at the default precisions %d B = %.2f MiB",
		strings.Join(row, "\n"), total, float64(total)/(1<<20))
	if total > 8<<20 {
		t.Errorf("a series' visitors take %d bytes, over the 8 MiB budget", total)
	}
}

// fillVisitors writes 120 buckets of precision p, each with n visitors
// from the day's pool of 20,000 (ids differ from one day to the next, as
// the salt does).
func fillVisitors(t *testing.T, srv *redistest.Server, p, n int) {
	t.Helper()
	// The oldest bucket is the current one, so Redis (on the real clock)
	// expires none of them while the test runs.
	start := series.BucketStart(testnow.Now().Unix(), p)
	clock := timeseries.NewManualClock(time.Unix(start, 0))
	r := readyRecorder(t, srv, timeseries.Config{
		Clock: clock, FlushInterval: time.Hour, DisableDurations: true,
		Schema: timeseries.Schema{Precisions: []int{p}}, MaxPendingAge: 1000 * time.Hour,
	})
	c := mustCounter(t, r, "hits")
	ids := make([]uint64, n)
	for b := range 120 {
		sec := clock.Now().Unix()
		day, first := uint64(sec/86400), (b*n)%20000
		for i := range ids {
			ids[i] = mix(day<<32 | uint64((first+i)%20000))
		}
		r.AddVisitors(c, ids)
		flush(t, r)
		clock.Advance(time.Duration(p) * time.Second)
	}
}

// mix is SplitMix64's finalizer: ids as spread as the salted hash's.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// visitorBytes is MEMORY USAGE summed over the series' visitor keys at
// precision p, with the encodings seen.
func visitorBytes(t *testing.T, srv *redistest.Server, p int) (int64, string) {
	t.Helper()
	prefix, _ := series.Keys{}.VisitorKeyPrefix(p, "hits")
	keys, err := redis.Strings(srv.Do("KEYS", globEscape(prefix)+"*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 120 {
		t.Fatalf("precision %d: %d visitor keys, want 120", p, len(keys))
	}
	var total int64
	encs := map[string]int{}
	for _, k := range keys {
		b, err := redis.Int64(srv.Do("MEMORY", "USAGE", k, "SAMPLES", 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		total += b
		v, _ := redis.Bytes(srv.Do("GETRANGE", k, 4, 4), nil) // HYLL header: 0 dense, 1 sparse
		encs[map[bool]string{true: "dense", false: "sparse"}[len(v) == 1 && v[0] == 0]]++
	}
	return total, fmt.Sprint(encs)
}
