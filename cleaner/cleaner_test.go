package cleaner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

var t0 = time.Unix(1700000000, 0)

func newCleaner(t *testing.T, cfg cleaner.Config) *cleaner.Cleaner {
	t.Helper()
	if cfg.OnError == nil {
		cfg.OnError = func(err error) { t.Errorf("cleaner error: %v", err) }
	}
	cfg.Manual = true
	c, err := cleaner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func pass(t *testing.T, c *cleaner.Cleaner) cleaner.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// buckets returns the starts of n buckets of precision p up to and
// including now's, then of ahead buckets after it.
func buckets(now time.Time, p, n, ahead int) []int64 {
	cur := timeseries.BucketStart(now.Unix(), p)
	var out []int64
	for i := -(n - 1); i <= ahead; i++ {
		out = append(out, cur+int64(i)*int64(p))
	}
	return out
}

// fill writes one hit in each bucket of a series and lists it as known.
func fill(srv *redistest.Server, prefix string, p int, name string, times []int64) {
	args := []any{fmt.Sprintf("%scount:%d:%s", prefix, p, name)}
	for _, ts := range times {
		args = append(args, ts, 1)
	}
	if len(times) > 0 {
		srv.Do("HSET", args...)
	}
	srv.Do("ZADD", prefix+"known:", 0, timeseries.KnownMember(p, name))
}

func fields(t *testing.T, srv *redistest.Server, key string) []int64 {
	t.Helper()
	fs, err := redis.Strings(srv.Do("HKEYS", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, f := range fs {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("field %q of %s is not a number", f, key)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func known(t *testing.T, srv *redistest.Server, prefix string) []string {
	t.Helper()
	ms, err := redis.Strings(srv.Do("ZRANGE", prefix+"known:", 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestPassDropsEmptySeries(t *testing.T) {
	srv := redistest.Start(t)
	now := t0
	fill(srv, "", 5, "stale", []int64{now.Unix() - 5*1000, now.Unix() - 5*500})
	fill(srv, "", 5, "fresh", []int64{now.Unix()})
	fill(srv, "", 60, "never-written", nil) // listed, hash missing altogether
	c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Clock: timeseries.NewManualClock(now)})
	st := pass(t, c)
	if got, want := known(t, srv, ""), []string{"5:fresh"}; !slices.Equal(got, want) {
		t.Errorf("known: = %v, want %v", got, want)
	}
	if n, _ := redis.Int(srv.Do("EXISTS", "count:5:stale"), nil); n != 0 {
		t.Error("count:5:stale still exists")
	}
	if st.SeriesRemoved != 2 || st.FieldsDeleted != 2 || st.Series != 3 {
		t.Errorf("stats = %+v, want 3 series, 2 removed, 2 fields deleted", st)
	}
}

func TestCadence(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Clock: clock})
	precisions := tracktest.DefaultPrecisions()
	// Which precisions each pass cleans, with the default one-minute interval.
	want := map[int64][]int{
		0:    precisions,
		1:    {5, 60},
		4:    {5, 60},
		5:    {5, 60, 300},
		60:   {5, 60, 300, 3600},
		300:  {5, 60, 300, 3600, 18000},
		1439: {5, 60},
		1440: {5, 60, 300, 3600, 86400}, // 1440 is not a multiple of 300
		1500: {5, 60, 300, 3600, 18000},
	}
	for n := int64(0); n <= 1500; n++ {
		expect, check := want[n]
		if check {
			// A stale field in every series: only the due ones lose it.
			for _, p := range precisions {
				stale := timeseries.BucketStart(clock.Now().Unix(), p) - 500*int64(p)
				fill(srv, "", p, "hits", []int64{stale, clock.Now().Unix()})
			}
		}
		st := pass(t, c)
		if st.Pass != n {
			t.Fatalf("pass numbered %d, want %d", st.Pass, n)
		}
		if !check {
			continue
		}
		var cleaned []int
		for _, p := range precisions {
			if len(fields(t, srv, fmt.Sprintf("count:%d:hits", p))) == 1 {
				cleaned = append(cleaned, p)
			}
		}
		if !slices.Equal(cleaned, expect) {
			t.Errorf("pass %d cleaned %v, want %v", n, cleaned, expect)
		}
		if st.Series != len(expect) {
			t.Errorf("pass %d looked at %d series, want %d", n, st.Series, len(expect))
		}
	}
}

// Paging by the last member seen: removing members during the pass must not
// make it skip others, and each page is one round trip.
func TestPagingSurvivesRemovals(t *testing.T) {
	srv := redistest.Start(t)
	const series, page = 40, 3
	for i := range series {
		name := fmt.Sprintf("s%02d", i)
		if i%2 == 0 {
			fill(srv, "", 5, name, []int64{t0.Unix() - 5*1000})
		} else {
			fill(srv, "", 5, name, buckets(t0, 5, 125, 0))
		}
	}
	c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), PageSize: page, Clock: timeseries.NewManualClock(t0)})
	st := pass(t, c)
	if st.SeriesRemoved != series/2 || st.Series != series {
		t.Errorf("stats = %+v, want %d series, %d removed", st, series, series/2)
	}
	if got := len(known(t, srv, "")); got != series/2 {
		t.Errorf("known: has %d members, want %d", got, series/2)
	}
	for i := 1; i < series; i += 2 {
		if n := len(fields(t, srv, fmt.Sprintf("count:5:s%02d", i))); n != 120 {
			t.Errorf("s%02d keeps %d fields, want 120", i, n)
		}
	}
	// lock, first page, one per page, unlock, then unlisting the emptied
	// series and looking at their hashes again
	pages := (series + page - 1) / page
	if want := 3 + pages + 2; st.RoundTrips != want {
		t.Errorf("%d round trips, want %d", st.RoundTrips, want)
	}
}

// A writer recording while cleaners delete must win: a hash that exists is
// always listed in known:. The cleaner's clock runs an hour ahead so that
// everything written is stale and gets deleted, which is when a cleaner
// that checks emptiness and removes the member in separate steps loses a
// series.
func TestWriterWinsAgainstCleaners(t *testing.T) {
	srv := redistest.Start(t)
	pool := srv.Pool()
	schema := timeseries.Schema{Precisions: []int{5}}
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, Schema: schema, WriteThrough: true, OnError: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close(context.Background())
	clock := timeseries.NewManualClock(time.Now().Add(time.Hour))
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var passes sync.Map
	for i := range 2 {
		c := newCleaner(t, cleaner.Config{Pool: pool, Schema: schema, Samples: 1, Clock: clock})
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for ctx.Err() == nil {
				if _, err := c.Pass(ctx); err != nil && ctx.Err() == nil {
					t.Error(err)
				}
				n++
			}
			passes.Store(i, n)
		}()
	}
	const names = 400
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
	listed := map[string]bool{}
	for _, m := range known(t, srv, "") {
		listed[m] = true
	}
	keys, _ := redis.Strings(srv.Do("KEYS", "count:*"), nil)
	for _, k := range keys {
		if m := k[len("count:"):]; !listed[m] {
			t.Errorf("%s exists but %s is not in known:", k, m)
		}
	}
	total := 0
	passes.Range(func(_, v any) bool { total += v.(int); return true })
	t.Logf("%d series written, %d left, %d cleaner passes", names, len(keys), total)
	if total < 2 {
		t.Errorf("only %d passes ran alongside the writer", total)
	}
}

func TestConcurrentCleaners(t *testing.T) {
	srv := redistest.Start(t)
	for i := range 50 {
		fill(srv, "", 5, fmt.Sprintf("s%d", i), buckets(t0, 5, 130, 0))
	}
	var cs []*cleaner.Cleaner
	for range 4 {
		cs = append(cs, newCleaner(t, cleaner.Config{Pool: srv.Pool(), Clock: timeseries.NewManualClock(t0)}))
	}
	stats := make([]cleaner.Stats, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if stats[i], err = c.Pass(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	var deleted int64
	ran := 0
	for _, st := range stats {
		deleted += st.FieldsDeleted
		if !st.Skipped {
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("every cleaner skipped its pass")
	}
	if deleted != 50*10 {
		t.Errorf("cleaners deleted %d fields together, want %d", deleted, 50*10)
	}
	for i := range 50 {
		if n := len(fields(t, srv, fmt.Sprintf("count:5:s%d", i))); n != 120 {
			t.Errorf("s%d keeps %d fields, want 120", i, n)
		}
	}
	if n, _ := redis.Int(srv.Do("EXISTS", "pulse:cleaner:lock"), nil); n != 0 {
		t.Error("the lock outlived the passes")
	}
}

func TestLockHeldSkipsPass(t *testing.T) {
	srv := redistest.Start(t)
	fill(srv, "", 5, "hits", []int64{1})
	srv.Do("SET", "pulse:cleaner:lock", "someone-else", "PX", 60000)
	c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Clock: timeseries.NewManualClock(t0)})
	if st := pass(t, c); !st.Skipped || st.Series != 0 {
		t.Errorf("stats = %+v, want a skipped pass", st)
	}
	if len(known(t, srv, "")) != 1 {
		t.Error("a skipped pass removed a series")
	}
	if v, _ := redis.String(srv.Do("GET", "pulse:cleaner:lock"), nil); v != "someone-else" {
		t.Errorf("another cleaner's lock was changed to %q", v)
	}
}

func TestPrefixKeepsAppsApart(t *testing.T) {
	srv := redistest.Start(t)
	fill(srv, "shop:", 5, "hits", []int64{1})
	fill(srv, "", 5, "hits", []int64{1})
	c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Schema: timeseries.Schema{Prefix: "shop:"}, Clock: timeseries.NewManualClock(t0)})
	pass(t, c)
	if got := known(t, srv, "shop:"); len(got) != 0 {
		t.Errorf("shop:known: = %v, want empty", got)
	}
	if got := known(t, srv, ""); len(got) != 1 {
		t.Errorf("another app's known: = %v, want it untouched", got)
	}
}

func TestRunCleansAndCloseStopsPromptly(t *testing.T) {
	srv := redistest.Start(t)
	fill(srv, "", 5, "hits", []int64{1})
	c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Interval: 20 * time.Millisecond, OnError: func(error) {}})
	// After the first pass, the next one starts against a hung Redis: it
	// blocks on its first reply, and Close must still return promptly.
	passed := make(chan struct{})
	var once sync.Once
	var first cleaner.Stats
	cleaner.SetAfterPass(c, func(st cleaner.Stats, _ error) {
		once.Do(func() { first = st; close(passed) })
	})
	var hung atomic.Bool
	blocked := make(chan struct{})
	cleaner.SetBeforePass(c, func() {
		select {
		case <-passed:
			if hung.CompareAndSwap(false, true) {
				srv.Pause()
				close(blocked)
			}
		default:
		}
	})
	defer srv.Resume()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err == nil {
		t.Error("a second Start was accepted")
	}
	select {
	case <-blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("no second pass within 10 s")
	}
	if first.SeriesRemoved != 1 {
		t.Errorf("first background pass: %+v, want the stale series removed", first)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v, want under a second", d)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	srv := redistest.Start(t)
	c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Interval: time.Hour})
	passed := make(chan struct{}, 1)
	cleaner.SetAfterPass(c, func(cleaner.Stats, error) { passed <- struct{}{} })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-passed // Run is in its wait for the next tick
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v, want nil", err)
		}
	case <-time.After(30 * time.Second): // a hang guard: the next tick is an hour away
		t.Fatal("Run did not return within 30 s of its context ending")
	}
}

func TestConfigErrors(t *testing.T) {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return nil, errors.New("unused") }}
	tests := []struct {
		name string
		cfg  cleaner.Config
	}{
		{"no pool", cleaner.Config{}},
		{"negative interval", cleaner.Config{Pool: pool, Interval: -time.Second}},
		{"negative samples", cleaner.Config{Pool: pool, Samples: -1}},
		{"negative page", cleaner.Config{Pool: pool, PageSize: -1}},
		{"bad precision", cleaner.Config{Pool: pool, Schema: timeseries.Schema{Precisions: []int{5, 5}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := cleaner.New(tt.cfg); err == nil {
				t.Error("New accepted a bad config")
			}
		})
	}
}
