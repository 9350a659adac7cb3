package fromstore_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// bookPrecisions are the bucket widths, in seconds, the counters below
// write: those Pulse keeps by default (the book's list also has 1 s).
var bookPrecisions = []int{5, 60, 300, 3600, 18000, 86400}

// updateCounter is the counter of Redis in Action, chapter 5, in Go: for
// each precision, list "<prec>:<name>" in the sorted set known: and add
// count to the field of the bucket now falls in, int(now/prec)*prec, of
// the hash count:<prec>:<name>, all in one pipeline.
func updateCounter(conn redis.Conn, name string, count int, now time.Time) error {
	for _, prec := range bookPrecisions {
		pnow := now.Unix() / int64(prec) * int64(prec)
		hash := strconv.Itoa(prec) + ":" + name
		if err := conn.Send("ZADD", "known:", 0, hash); err != nil {
			return err
		}
		if err := conn.Send("HINCRBY", "count:"+hash, pnow, count); err != nil {
			return err
		}
	}
	if err := conn.Flush(); err != nil {
		return err
	}
	for range 2 * len(bookPrecisions) {
		if _, err := conn.Receive(); err != nil {
			return err
		}
	}
	return nil
}

// writeBook writes five weeks of traffic ending at now through
// updateCounter: one call per hour of traffic with its hits, at the
// middle of the hour, then for the last 24 hours one per 5 minutes; the 3
// closed hours before the current one have none. Count hashes do not
// expire, so a fixed now in the past serves as well as the real one. It
// returns the first hour of the drop.
func writeBook(t *testing.T, conn redis.Conn, name string, now time.Time) time.Time {
	t.Helper()
	current := now.Truncate(time.Hour)
	drop := current.Add(-3 * time.Hour)
	dense := current.Add(-24 * time.Hour)
	rng := rand.New(rand.NewPCG(5, 0))
	step := time.Hour
	for at := current.Add(-35 * 24 * time.Hour); at.Before(now); at = at.Add(step) {
		if !at.Before(dense) {
			step = 5 * time.Minute
		}
		end := at.Add(step)
		if end.After(now) {
			end = now
		}
		mid := at.Add(end.Sub(at) / 2)
		hits := poisson(rng, rate(mid)*end.Sub(at).Minutes())
		if !at.Before(drop) && at.Before(current) {
			hits = 0
		}
		if hits == 0 {
			continue
		}
		if err := updateCounter(conn, name, hits, mid); err != nil {
			t.Fatal(err)
		}
	}
	return drop
}

// A series written by the book's own counter, not by Pulse's recorder,
// forecasts from the same keys: at 1 h with its own day and the week of
// its 1 d hash, and at 5 min borrowing both; the drop to zero of its
// last three hours is flagged within 3 buckets of its start, not before
// (a drop flag raised by noise earlier would be the first). The drops
// begin at fixed times, whatever the hour the test runs at: in the
// night's trough, as the morning rises, at noon, in the afternoon and
// in the evening.
func TestFitBookCounter(t *testing.T) {
	srv := redistest.Start(t)
	for _, h := range []int{3, 7, 11, 16, 23} {
		now := time.Date(2026, 3, 4, h, 37, 0, 0, time.UTC)
		t.Run(now.Format("15:04"), func(t *testing.T) {
			srv.FlushAll()
			conn := srv.Pool().Get()
			defer conn.Close()
			drop := writeBook(t, conn, "GET /book", now)
			checkBookHourly(t, srv, now, drop)
			checkBookLive(t, srv, drop)
		})
	}
}

// checkBookHourly fits the 1 h series at now, three hours into the drop.
func checkBookHourly(t *testing.T, srv *redistest.Server, now, drop time.Time) {
	t.Helper()
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, timeseries.NewManualClock(now))
	if err != nil {
		t.Fatal(err)
	}
	fd, err := fromstore.Fit(context.Background(), store, "GET /book", 3600, forecast.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s := fd.Model.Seasons; len(s) != 2 || s[0].Source != "own" || s[1].Source != "1d" {
		t.Errorf("1 h seasons %+v, want its own day and the week from 1d", s)
	}
	if first := firstDrop(fd); first.Before(drop) || first.After(drop.Add(2*time.Hour)) {
		t.Errorf("1 h: first drop flag at %v, want within 3 buckets of %v: %+v", first, drop, fd.Flags)
	}
	// One step ahead, before the drop, the expectation is the rate's.
	var rel float64
	hist := fd.History[len(fd.History)-3-48 : len(fd.History)-3]
	for _, p := range hist {
		want := rate(p.Time.Add(30*time.Minute)) * 60
		rel += abs(p.Expected-want) / want / float64(len(hist))
	}
	t.Logf("1 h: expectations within %.3f of the true rate on average, %d flags", rel, len(fd.Flags))
	if rel > 0.15 {
		t.Errorf("expectations stray %.2f from the true rate on average", rel)
	}
	if next := fd.Forecast(1)[0]; !next.Time.Equal(now.Truncate(time.Hour)) {
		t.Errorf("forecast starts at %v, want the current hour", next.Time)
	}
}

// checkBookLive fits the 5 min series as a scan at each bucket sees it,
// 17 minutes into the drop: three closed buckets of zeros. (Fitted
// hours later, the drop's 36 buckets in the window's 120 would widen
// the bands of the whole history; docs/forecasts.md.)
func checkBookLive(t *testing.T, srv *redistest.Server, drop time.Time) {
	t.Helper()
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, timeseries.NewManualClock(drop.Add(17*time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	f5, err := fromstore.Fit(context.Background(), store, "GET /book", 300, forecast.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s := f5.Model.Seasons; len(s) != 2 || s[0].Source != "1h" || s[1].Source != "1d" {
		t.Errorf("5 min seasons %+v, want the day from 1h and the week from 1d", s)
	}
	if first := firstDrop(f5); first.Before(drop) || first.After(drop.Add(10*time.Minute)) {
		t.Errorf("5 min: first drop flag at %v, want within 3 buckets of %v: %+v", first, drop, f5.Flags)
	}
}

// firstDrop is the bucket of the first drop or level shift flagged, or
// the zero time.
func firstDrop(fd *forecast.Fitted) time.Time {
	for _, f := range fd.Flags {
		if f.Kind == forecast.Drop || f.Kind == forecast.LevelShift {
			return f.Bucket
		}
	}
	return time.Time{}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
