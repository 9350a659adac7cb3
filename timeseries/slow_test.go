package timeseries_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestSlowSeries: with SlowThresholds, each request slower than a
// threshold counts a hit in that threshold's slow series of every series
// it is timed in, exactly: a request that took the threshold itself is
// not slower. Buffered and write-through alike; the status classes,
// counted only, get none.
func TestSlowSeries(t *testing.T) {
	durations := []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 250*time.Millisecond + 1,
		999 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Minute}
	want := map[string]int64{ // slower than 250ms: 5 (250ms itself is not); than 1s: 2 (1s is not)
		"slow:250ms hits": 5, "slow:250ms GET /x": 5, "slow:1s hits": 2, "slow:1s GET /x": 2,
	}
	for _, writeThrough := range []bool{false, true} {
		t.Run("write-through="+strconv.FormatBool(writeThrough), func(t *testing.T) {
			srv := redistest.Start(t)
			rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), WriteThrough: writeThrough,
				SlowThresholds: []time.Duration{time.Second, 250 * time.Millisecond, time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close(context.Background())
			hits, _ := rec.Counter("hits")
			route, _ := rec.Counter("GET /x")
			class, _ := rec.Counter("GET /x status:2xx")
			for _, d := range durations {
				rec.RecordRequest(timeseries.Request{Duration: d, Timed: [4]*timeseries.Counter{hits, route}, Counted: [2]*timeseries.Counter{class}})
			}
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			for name, n := range want {
				for _, p := range defaultPrecisions(t) {
					if got := srv.HashSum(timeseries.Schema{}.CountKey(p, name)); got != n {
						t.Errorf("%s at %d s: %d, want %d", name, p, got, n)
					}
					member := timeseries.KnownMember(p, name)
					if _, err := redis.Float64(srv.Do("ZSCORE", "known:", member), nil); err != nil {
						t.Errorf("%s is not in the known set: %v", member, err)
					}
				}
			}
			if n, _ := redis.Int(srv.Do("EXISTS", "count:5:slow:250ms GET /x status:2xx"), nil); n != 0 {
				t.Error("a series counted only has a slow series")
			}
			if got := rec.SlowThresholds(); len(got) != 2 || got[0] != 250*time.Millisecond || got[1] != time.Second {
				t.Errorf("SlowThresholds %v, want [250ms 1s]", got)
			}
		})
	}
}

// defaultPrecisions are the precisions of the zero Schema.
func defaultPrecisions(t *testing.T) []int {
	s, err := timeseries.Schema{}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return s.Precisions
}

// TestSlowSeriesBounds: the slow series are not held to MaxNames (they
// are at most the named series times the thresholds), a name too long
// to take the prefix gets none and still counts its hits, and the slow
// series are no route's.
func TestSlowSeriesBounds(t *testing.T) {
	srv := redistest.Start(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), MaxNames: 2,
		SlowThresholds: []time.Duration{time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close(context.Background())
	long := "GET /" + strings.Repeat("a", 190)
	a, _ := rec.Counter("GET /a")
	l, _ := rec.Counter(long)
	for _, c := range []*timeseries.Counter{a, l} {
		rec.RecordRequest(timeseries.Request{Duration: time.Second, Timed: [4]*timeseries.Counter{c}})
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := srv.HashSum("count:5:slow:1ms GET /a"); got != 1 {
		t.Errorf("slow:1ms GET /a: %d, want 1 although the names are at their cap", got)
	}
	if got := srv.HashSum("count:5:" + long); got != 1 {
		t.Errorf("the long route counted %d, want 1", got)
	}
	if h := rec.Health(); h.OverflowNames != 0 {
		t.Errorf("%d names refused, want none", h.OverflowNames)
	}
	if _, ok := timeseries.ParseRouteName("slow:1ms GET /a"); ok {
		t.Error("a slow series reads as a route's")
	}
	totals := []timeseries.SeriesTotal{{Name: "GET /a", Hits: 3}, {Name: "slow:1ms GET /a", Hits: 1}}
	if rs := timeseries.RouteRequests(totals); len(rs) != 1 || rs[0].Hits != 3 {
		t.Errorf("RouteRequests %+v: want the route alone", rs)
	}
}

func TestSlowThresholdsConfig(t *testing.T) {
	srv := redistest.Start(t)
	for _, c := range []struct {
		name string
		cfg  timeseries.Config
		want string
	}{
		{"negative", timeseries.Config{SlowThresholds: []time.Duration{-time.Second}}, "not above 0"},
		{"zero", timeseries.Config{SlowThresholds: []time.Duration{0, time.Second}}, "not above 0"},
		{"too many", timeseries.Config{SlowThresholds: []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9}}, "at most 8"},
		{"durations off", timeseries.Config{SlowThresholds: []time.Duration{time.Second}, DisableDurations: true}, "needs durations"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Pool = srv.Pool()
			rec, err := timeseries.NewRecorder(c.cfg)
			if err == nil {
				rec.Close(context.Background())
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q lacks %q", err, c.want)
			}
		})
	}
}

func TestThresholdText(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{500 * time.Millisecond, "500ms"}, {time.Second, "1s"}, {1500 * time.Millisecond, "1.5s"},
		{2 * time.Minute, "2m"}, {90 * time.Minute, "1h30m"}, {time.Hour, "1h"}, {250 * time.Microsecond, "250µs"},
		{time.Minute + time.Second, "1m1s"},
	} {
		if got := timeseries.ThresholdText(c.d); got != c.want {
			t.Errorf("%v: %q, want %q", c.d, got, c.want)
		}
	}
}

// TestParseSlowSeries: ParseSlowSeries reads back what SlowSeries wrote,
// and nothing else.
func TestParseSlowSeries(t *testing.T) {
	for _, c := range []struct {
		name      string
		series    string
		threshold time.Duration
		ok        bool
	}{
		{timeseries.SlowSeries("GET /posts/:id", 500*time.Millisecond), "GET /posts/:id", 500 * time.Millisecond, true},
		{timeseries.SlowSeries("hits", 90*time.Minute), "hits", 90 * time.Minute, true},
		{timeseries.SlowSeries("GET /a b", 1500*time.Millisecond), "GET /a b", 1500 * time.Millisecond, true},
		{"GET /posts/:id", "", 0, false},
		{"slow:500ms", "", 0, false},
		{"slow:500ms ", "", 0, false},
		{"slow:fast GET /x", "", 0, false},
		{"slow:0s GET /x", "", 0, false},
		{"slow:-1s GET /x", "", 0, false},
		{"slow:1m0s GET /x", "", 0, false}, // SlowSeries writes 1m
		{"GET /x slow:1s", "", 0, false},
	} {
		series, threshold, ok := timeseries.ParseSlowSeries(c.name)
		if series != c.series || threshold != c.threshold || ok != c.ok {
			t.Errorf("ParseSlowSeries(%q) = %q, %v, %v; want %q, %v, %v", c.name, series, threshold, ok, c.series, c.threshold, c.ok)
		}
	}
}
