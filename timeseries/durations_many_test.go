package timeseries_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// DurationsMany reads, for each series, bucket for bucket what Durations
// reads; a name that cannot have durations is left out, one never
// written reads as empty buckets.
func TestDurationsMany(t *testing.T) {
	srv := redistest.Start(t)
	start := recent()
	clock := timeseries.NewManualClock(start)
	r := newRecorder(t, srv, timeseries.Config{Clock: clock, FlushInterval: time.Hour})
	timed := []string{"hits", "GET /a", "x{y}"}
	for i, name := range append(timed, "a}b") {
		c := mustCounter(t, r, name)
		for sec := range 20 {
			r.RecordDuration(time.Duration(sec+1)*time.Duration(i+1)*time.Millisecond, c)
			if sec%5 == 4 {
				clock.Advance(5 * time.Second)
			}
		}
	}
	flush(t, r)
	ctx := context.Background()
	from, to := start.Unix(), start.Unix()+60
	names := append([]string{"hits", "never", "a}b"}, timed...)
	got, err := r.Store().DurationsMany(ctx, names, 5, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Errorf("%d series read, want hits, GET /a, x{y} and never", len(got))
	}
	for _, name := range append(timed, "never") {
		one, err := r.Store().Durations(ctx, name, 5, from, to)
		if err != nil {
			t.Fatal(err)
		}
		many := got[name]
		if len(many.Buckets) != len(one.Buckets) || !many.Window.Equal(one.Window) || many.Precision != 5 {
			t.Fatalf("%q: %d buckets, window of %d, want %d and %d", name, len(many.Buckets), many.Window.Count(), len(one.Buckets), one.Window.Count())
		}
		for i := range one.Buckets {
			if many.Buckets[i].Start != one.Buckets[i].Start || !many.Buckets[i].Hist.Equal(one.Buckets[i].Hist) {
				t.Errorf("%q bucket %d differs from Durations'", name, i)
			}
		}
	}
	if w := got["hits"].Window.Count(); w != 20 {
		t.Errorf("hits: %d durations, want 20", w)
	}
	if _, err := r.Store().DurationsMany(ctx, names, 7, from, to); !errors.Is(err, timeseries.ErrUnknownPrecision) {
		t.Errorf("precision 7: %v, want ErrUnknownPrecision", err)
	}
	if _, err := r.Store().DurationsMany(ctx, names, 5, from, from+5*5000); !errors.Is(err, timeseries.ErrRangeTooLarge) {
		t.Errorf("5000 buckets: %v, want ErrRangeTooLarge", err)
	}
}

// A bucket Pulse did not write, or wrote and then someone changed, fails
// the read with its key, whether its fields or its type are wrong.
func TestDurationsManyBadBucket(t *testing.T) {
	srv := redistest.Start(t)
	start := recent()
	r := newRecorder(t, srv, timeseries.Config{Clock: timeseries.NewManualClock(start), FlushInterval: time.Hour})
	c := mustCounter(t, r, "hits")
	r.RecordDuration(time.Millisecond, c)
	flush(t, r)
	ctx := context.Background()
	from := series.BucketStart(start.Unix(), 60)
	key, _ := series.Keys{}.LatKey(60, "hits", from)
	if _, err := r.Store().DurationsMany(ctx, []string{"hits"}, 60, from, from); err != nil {
		t.Fatalf("as written: %v", err)
	}
	for _, bad := range []struct {
		name  string
		cmd   string
		args  []any
		about string
	}{
		{"count off", "HINCRBY", []any{key, "n", 1}, "count 2"},
		{"not a number", "HSET", []any{key, "s", "1.5"}, "not a non-negative integer"},
		{"unknown field", "HSET", []any{key, "x", 1}, "unknown field"},
		{"not a hash", "SET", []any{key, "x"}, "WRONGTYPE"},
	} {
		srv.Do("DEL", key)
		r.RecordDuration(time.Millisecond, c)
		flush(t, r)
		srv.Do(bad.cmd, bad.args...)
		_, err := r.Store().DurationsMany(ctx, []string{"hits"}, 60, from, from)
		if err == nil || !strings.HasPrefix(err.Error(), "timeseries: durations many: ") || !strings.Contains(err.Error(), bad.about) {
			t.Errorf("%s: %v, want an error about %q", bad.name, err, bad.about)
		}
		if bad.cmd != "SET" && (err == nil || !strings.Contains(err.Error(), key)) {
			t.Errorf("%s: %v does not name %s", bad.name, err, key)
		}
	}
}
