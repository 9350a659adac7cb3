package fromstore_test

import (
	"context"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// keepFixture is scannerFixture with a burst of its first route, eight
// times its traffic for three minutes from burstAt, and two Scanners
// with Keep on one store: two app instances on one Redis.
func keepFixture(t *testing.T) (*redistest.Server, *timeseries.ManualClock, [2]*fromstore.Scanner, []string, time.Time) {
	t.Helper()
	srv, clock, sc, names := scannerFixture(t)
	burstAt := clock.Now().Truncate(time.Minute).Add(10 * time.Minute)
	for m := range 3 {
		b := burstAt.Add(time.Duration(m) * time.Minute)
		srv.Do("HSET", "count:60:"+names[0], b.Unix(), int(8*count(t, srv, names[0], b))+40)
	}
	sc.Keep, sc.App = true, "shop"
	other := &fromstore.Scanner{Store: sc.Store, Keep: true, App: "shop"}
	return srv, clock, [2]*fromstore.Scanner{sc, other}, names, burstAt
}

// recorded is every incident kept at 1 min.
func recorded(t *testing.T, st *timeseries.Store) []fromstore.Record {
	t.Helper()
	recs, err := fromstore.Incidents(context.Background(), st, 60, time.Unix(0, 0), time.Unix(math.MaxInt32, 0))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// burstRecords are the records of the burst: up, with the first route.
func burstRecords(recs []fromstore.Record, name string) []fromstore.Record {
	var out []fromstore.Record
	for _, r := range recs {
		if r.Has(name) && r.Direction == forecast.Up {
			out = append(out, r)
		}
	}
	return out
}

// Two instances scanning in turn, a minute apart, through the burst and
// after it: the burst is recorded once, from the first scan that sees it,
// with the same start on every scan after; its return to normal is never
// recorded; while open only its end and peak move; a restarted instance
// reads the same scores and the same list.
func TestIncidentRecordedOnce(t *testing.T) {
	_, clock, scs, names, burstAt := keepFixture(t)
	ctx := context.Background()
	cfg := forecast.Config{FlagsOnly: true}
	clock.Advance(30 * time.Second)
	var first *fromstore.Record
	for step := range 30 {
		if _, err := scs[step%2].FitAll(ctx, names, 60, cfg); err != nil {
			t.Fatal(err)
		}
		recs := recorded(t, scs[0].Store)
		burst := burstRecords(recs, names[0])
		switch {
		case len(burst) > 1:
			t.Fatalf("step %d: the burst recorded %d times: %+v", step, len(burst), burst)
		case len(burst) == 0 && first != nil:
			t.Fatalf("step %d: the burst, recorded before, is gone", step)
		case len(burst) == 1 && first == nil:
			first = &burst[0]
			if first.Start < burstAt.Unix() || first.Start > burstAt.Unix()+120 || first.App != "shop" || first.Precision != 60 {
				t.Errorf("the burst at %v recorded as %+v", burstAt, *first)
			}
		case len(burst) == 1:
			if burst[0].Start != first.Start || burst[0].Series != first.Series || burst[0].End < first.End ||
				math.Abs(burst[0].Peak.Score) < math.Abs(first.Peak.Score) {
				t.Errorf("step %d: %+v, was %+v: start or root moved, or end or peak went back", step, burst[0], *first)
			}
			first = &burst[0]
		}
		for _, r := range recs {
			if r.Has(names[0]) && r.Direction == forecast.Down && r.Start >= burstAt.Unix() {
				t.Errorf("step %d: the return to normal recorded: %+v", step, r)
			}
			if math.Abs(r.Peak.Score) < forecast.DefaultFineBand {
				t.Errorf("step %d: an incident scored %.2f, under the band, recorded: %+v", step, r.Peak.Score, r)
			}
		}
		clock.Advance(time.Minute)
	}
	if first == nil {
		t.Fatal("the burst was never recorded")
	}
	if first.Open {
		t.Errorf("the burst is still open 15 minutes after it: %+v", *first)
	}

	// A restarted instance: the same scores for every settled bucket, and
	// nothing written for them again.
	a, err := scs[0].FitAll(ctx, names, 60, cfg)
	if err != nil {
		t.Fatal(err)
	}
	restarted := &fromstore.Scanner{Store: scs[0].Store, Keep: true}
	b, err := restarted.FitAll(ctx, names, 60, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		sa, sb := scores(a[name].Fitted), scores(b[name].Fitted)
		settled := clock.Now().Truncate(time.Minute).Add(-2 * time.Minute).Unix()
		for bucket, v := range sa {
			if bucket <= settled && !math.IsNaN(v) && sb[bucket] != v {
				t.Errorf("%s at %d: %v before the restart, %v after", name, bucket, v, sb[bucket])
			}
		}
	}
	if n := len(burstRecords(recorded(t, scs[0].Store), names[0])); n != 1 {
		t.Errorf("after the restart the burst is recorded %d times", n)
	}
}

// Two instances scanning the same bucket at once make one record.
func TestIncidentConcurrentWriters(t *testing.T) {
	_, clock, scs, names, burstAt := keepFixture(t)
	ctx := context.Background()
	clock.Advance(burstAt.Add(4*time.Minute + 30*time.Second).Sub(clock.Now()))
	var wg sync.WaitGroup
	for _, sc := range scs {
		wg.Go(func() {
			if _, err := sc.FitAll(ctx, names, 60, forecast.Config{FlagsOnly: true}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(burstRecords(recorded(t, scs[0].Store), names[0])); n != 1 {
		t.Errorf("two instances at once: %d records of the burst, want 1", n)
	}
}

// While Redis refuses writes (out of memory) the scans go on and record
// nothing; once it takes them again, the next scan writes the incident
// kept meanwhile.
func TestIncidentWrittenAfterAnOutage(t *testing.T) {
	srv, clock, scs, names, burstAt := keepFixture(t)
	ctx := context.Background()
	var errs []error
	scs[0].OnError = func(err error) { errs = append(errs, err) }
	clock.Advance(burstAt.Add(4*time.Minute + 30*time.Second).Sub(clock.Now()))
	restore := srv.Faults().OOM()
	if _, err := scs[0].FitAll(ctx, names, 60, forecast.Config{FlagsOnly: true}); err != nil {
		t.Fatal(err)
	}
	if len(errs) == 0 {
		t.Error("no write failure reported while Redis refused writes")
	}
	if n := len(recorded(t, scs[0].Store)); n != 0 {
		t.Fatalf("%d records written while Redis refused writes", n)
	}
	restore()
	if _, err := scs[0].FitAll(ctx, names, 60, forecast.Config{FlagsOnly: true}); err != nil {
		t.Fatal(err)
	}
	if n := len(burstRecords(recorded(t, scs[0].Store), names[0])); n != 1 {
		t.Errorf("after the outage the burst is recorded %d times, want 1", n)
	}
}

// count is what the series holds in the minute starting at t.
func count(t *testing.T, srv *redistest.Server, name string, at time.Time) float64 {
	t.Helper()
	n, err := redis.Int(srv.Do("HGET", "count:60:"+name, strconv.FormatInt(at.Unix(), 10)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return float64(n)
}
