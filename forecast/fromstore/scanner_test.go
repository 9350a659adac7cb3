package fromstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// scannerFixture is three series at 1 min, 1 h and 1 d, a store on a
// clock the test moves, and a Scanner on it. The clock starts at a fixed
// 10:10 UTC, whatever the hour the test runs at: the hashes have no
// expiry, and the steps below must cross an hour but not a day.
func scannerFixture(t *testing.T) (*redistest.Server, *timeseries.ManualClock, *fromstore.Scanner, []string) {
	t.Helper()
	srv := redistest.Start(t)
	start := time.Date(2026, 3, 4, 10, 10, 0, 0, time.UTC)
	// Buckets from two hours before the start to two after: those past
	// the clock are not read.
	seed(t, srv, 3, start)
	names := seed(t, srv, 3, start.Add(2*time.Hour))

	clock := timeseries.NewManualClock(start)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	return srv, clock, &fromstore.Scanner{Store: store}, names
}

// scan runs sc over names at 1 min and returns the HMGET it cost; unless
// told it may be stale, its fits are checked against a fresh FitAll's at
// the same time.
func scan(t *testing.T, srv *redistest.Server, sc *fromstore.Scanner, names []string, stale bool) int {
	t.Helper()
	ctx := context.Background()
	before := srv.Calls("HMGET")
	got, err := sc.FitAll(ctx, names, 60, forecast.Config{FlagsOnly: true})
	cost := srv.Calls("HMGET") - before
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := fromstore.FitAll(ctx, sc.Store, names, 60, forecast.Config{FlagsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if stale {
			break
		}
		a, b := got[name].Fitted, fresh[name].Fitted
		if a == nil || b == nil {
			t.Fatalf("%s: fits %v and %v", name, got[name], fresh[name])
		}
		if fmt.Sprint(a.Flags, a.Forecast(6), a.Model) != fmt.Sprint(b.Flags, b.Forecast(6), b.Model) {
			t.Errorf("%s: the Scanner's fit differs from a fresh one:\n%v\n%v", name, a.Forecast(6), b.Forecast(6))
		}
	}
	return cost
}

// The 1 h and 1 d series are read once per closed bucket of theirs;
// every scan reads the series' own precision. The fits are those of a
// fresh read each time.
func TestScannerReadsLentSeriesOncePerBucket(t *testing.T) {
	srv, clock, sc, names := scannerFixture(t)
	n := len(names)
	for _, step := range []struct {
		name    string
		advance time.Duration
		want    int // HMGET: one per series and precision read
	}{
		{"first scan", 0, 3 * n},
		{"a minute on", time.Minute, n},
		{"half an hour on", 30 * time.Minute, n},
		{"the hour closed", 30 * time.Minute, 2 * n},
		{"later that hour", 20 * time.Minute, n},
	} {
		clock.Advance(step.advance)
		if got := scan(t, srv, sc, names, false); got != step.want {
			t.Errorf("%s: %d HMGET, want %d", step.name, got, step.want)
		}
	}
}

// Read just after an hour closed, the 1 h series is read again once
// Settle has passed: counts flushed late into the closed hour are seen.
func TestScannerRereadsAfterSettle(t *testing.T) {
	srv, clock, sc, names := scannerFixture(t)
	n := len(names)
	sc.Settle = 4 * time.Second
	clock.Advance(50*time.Minute + 2*time.Second) // 2 s into the next hour
	if got := scan(t, srv, sc, names, false); got != 3*n {
		t.Fatalf("first scan: %d HMGET, want %d", got, 3*n)
	}
	closedHour := clock.Now().Truncate(time.Hour).Add(-time.Hour).Unix()
	srv.Do("HINCRBY", "count:3600:"+names[0], closedHour, 700) // a late flush
	clock.Advance(time.Second)
	if got := scan(t, srv, sc, names, true); got != n {
		t.Errorf("within Settle: %d HMGET, want %d", got, n)
	}
	clock.Advance(2 * time.Second) // 5 s into the hour
	if got := scan(t, srv, sc, names, false); got != 2*n {
		t.Errorf("after Settle: %d HMGET, want %d (the 1 h series again)", got, 2*n)
	}
	clock.Advance(time.Minute)
	if got := scan(t, srv, sc, names, false); got != n {
		t.Errorf("a minute on: %d HMGET, want %d", got, n)
	}
}

// Scans at once share what is read; a failed read leaves nothing behind.
func TestScannerConcurrentAndFailing(t *testing.T) {
	srv, _, sc, names := scannerFixture(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			all, err := sc.FitAll(ctx, names, 60, forecast.Config{FlagsOnly: true})
			if err == nil && len(all) != len(names) {
				err = fmt.Errorf("%d fits of %d series", len(all), len(names))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	srv.Stop()
	if _, err := sc.FitAll(ctx, names, 60, forecast.Config{}); err == nil {
		t.Error("no error with Redis down")
	}
	srv.Restart()
	// The pool's connections to the stopped server fail once each.
	for i := 0; ; i++ {
		if _, err := sc.FitAll(ctx, names, 60, forecast.Config{}); err == nil {
			break
		} else if i == 20 {
			t.Fatalf("after the restart: %v", err)
		}
	}
	if got := scan(t, srv, sc, names, false); got != len(names) {
		t.Errorf("after the restart: %d HMGET, want %d (the lent series kept)", got, len(names))
	}
	if _, err := (&fromstore.Scanner{}).FitAll(ctx, names, 60, forecast.Config{}); err == nil {
		t.Error("a Scanner without a Store: no error")
	}
}
