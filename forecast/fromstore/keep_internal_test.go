package fromstore

import (
	"context"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// fitsOf is a scan's fits holding only the incidents given.
func fitsOf(incs ...forecast.Incident) map[string]Result {
	out := map[string]Result{}
	for _, in := range incs {
		fd := out[in.Series].Fitted
		if fd == nil {
			fd = &forecast.Fitted{}
		}
		fd.Incidents = append(fd.Incidents, in)
		out[in.Series] = Result{Fitted: fd}
	}
	return out
}

func incidentAt(series string, dir forecast.Direction, start, end time.Time, score float64) forecast.Incident {
	kind := forecast.Spike
	if dir == forecast.Down {
		kind = forecast.Drop
	}
	return forecast.Incident{Series: series, Precision: time.Minute, Kind: kind, Direction: dir, Start: start, End: end,
		Buckets: int(end.Sub(start)/time.Minute) + 1, Score: score,
		Peak: forecast.Flag{Series: series, Bucket: start, Kind: kind, Direction: dir, Observed: 100, Expected: 10, Score: score}}
}

// The rules of the record, scan by scan, on crafted fits: an incident
// seen again with a later start, or under another root, is the record
// already kept; a break the other way within its recovery is not
// recorded; one under the band is not; an incident costs one command to
// record, and one kept unchanged none.
func TestRecordRules(t *testing.T) {
	srv := redistest.Start(t)
	now := time.Date(2026, 3, 4, 10, 30, 0, 0, time.UTC)
	st, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, timeseries.NewManualClock(now))
	if err != nil {
		t.Fatal(err)
	}
	sc := &Scanner{Store: st, Keep: true}
	mem := sc.memoryOf(60)
	ctx := context.Background()
	s := now.Add(-20 * time.Minute)
	settled := now.Add(-time.Minute)
	scan := func(incs ...forecast.Incident) (writes int) {
		t.Helper()
		before := srv.Calls("EVALSHA") + srv.Calls("EVAL")
		if err := sc.record(ctx, 60, forecast.Config{}, mem, fitsOf(incs...), settled); err != nil {
			t.Fatal(err)
		}
		return srv.Calls("EVALSHA") + srv.Calls("EVAL") - before - 1 // less the read
	}
	list := func() []Record {
		t.Helper()
		recs, err := Incidents(ctx, st, 60, time.Unix(0, 0), now)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}

	// Load the scripts, as a server that ran a while has them.
	if err := sc.record(ctx, 300, forecast.Config{}, sc.memoryOf(300), fitsOf(incidentAt("GET /z", forecast.Up, s, s, 9)), settled); err != nil {
		t.Fatal(err)
	}
	if w := scan(incidentAt("GET /a", forecast.Up, s, s.Add(2*time.Minute), 6)); w != 1 {
		t.Errorf("a new incident: %d writes, want 1", w)
	}
	if w := scan(incidentAt("GET /a", forecast.Up, s, s.Add(2*time.Minute), 6)); w != 0 {
		t.Errorf("the same incident again: %d writes, want 0", w)
	}
	later := incidentAt("hits", forecast.Up, s.Add(time.Minute), s.Add(3*time.Minute), 8)
	later.Peak.Bucket = s.Add(3 * time.Minute)
	scan(later, incidentAt("GET /a", forecast.Up, s.Add(time.Minute), s.Add(3*time.Minute), 7))
	scan(incidentAt("GET /a", forecast.Down, s.Add(4*time.Minute), s.Add(5*time.Minute), -6)) // its recovery
	scan(incidentAt("GET /b", forecast.Up, s, s.Add(2*time.Minute), 2.0))                     // under the band
	recs := list()
	if len(recs) != 1 {
		t.Fatalf("%d records, want the one: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.Series != "GET /a" || r.Start != s.Unix() || r.End != s.Add(3*time.Minute).Unix() || r.Peak.Score != 7 ||
		len(r.Related) != 1 || r.Related[0] != "hits" || r.Direction != forecast.Up {
		t.Errorf("the record: %+v, want GET /a from %v to 3 minutes on, with hits, the root's peak 7", r, s)
	}

	// A break the other way long after the recovery is an incident.
	scan(incidentAt("GET /a", forecast.Down, s.Add(12*time.Minute), s.Add(13*time.Minute), -6))
	if n := len(list()); n != 2 {
		t.Errorf("a drop long after the burst: %d records, want 2", n)
	}
}

// On a Redis Cluster the record's two keys share a slot (one script
// reaches both) and the scores go to each series' own node.
func TestRecordOnACluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	now := time.Date(2026, 3, 4, 10, 30, 0, 0, time.UTC)
	st, err := timeseries.NewStore(cl.Client(t), timeseries.Schema{Prefix: "c:"}, timeseries.NewManualClock(now))
	if err != nil {
		t.Fatal(err)
	}
	sc := &Scanner{Store: st, Keep: true}
	ctx := context.Background()
	s := now.Add(-20 * time.Minute)
	fits := fitsOf(incidentAt("GET /a", forecast.Up, s, s.Add(2*time.Minute), 6), incidentAt("GET /b", forecast.Down, s, s, -7))
	if err := sc.record(ctx, 60, forecast.Config{}, sc.memoryOf(60), fits, now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	recs, err := Incidents(ctx, st, 60, time.Unix(0, 0), now)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v; want 2", len(recs), err)
	}
	todo := map[string]map[int64]float64{"GET /a": {s.Unix(): 1.5}, "GET /b": {s.Unix(): -2}, "hits": {s.Unix(): 0.25}}
	kept, err := keepScores(ctx, sc.router(), st.Schema(), 60, 0, todo)
	if err != nil || kept["GET /a"][s.Unix()] != 1.5 || kept["hits"][s.Unix()] != 0.25 {
		t.Fatalf("scores kept %v, %v", kept, err)
	}
}

func TestMain(m *testing.M) { redistest.Main(m) }
