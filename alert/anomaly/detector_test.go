package anomaly_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/alert/anomaly"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// seed writes three routes' buckets at 1 min, 1 h and 1 d around start,
// two hours either side, into the count hashes as a recorder would: a
// daily rhythm of about 20 a minute with normal noise.
func seed(t *testing.T, srv *redistest.Server, start time.Time) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 5))
	names := []string{"GET /route/0", "GET /route/1", "GET /route/2"}
	for _, name := range names {
		for _, p := range []int{60, 3600, 86400} {
			args := []any{fmt.Sprintf("count:%d:%s", p, name)}
			cur := start.Add(2*time.Hour).Unix() / int64(p) * int64(p)
			for k := int64(0); k <= 2*fromstore.Window; k++ {
				at := cur - k*int64(p)
				h := float64(at%86400) / 3600
				mu := 20 * math.Exp(0.7*math.Cos(2*math.Pi*(h-15)/24)) * float64(p) / 60
				args = append(args, at, int(math.Max(0, math.Round(mu+math.Sqrt(mu)*rng.NormFloat64()))))
			}
			srv.Do("HSET", args...)
			srv.Do("ZADD", "known:", 0, fmt.Sprintf("%d:%s", p, name))
		}
	}
	return names
}

// detectorFixture is three routes at 10:10:30, on a Scanner keeping
// its incidents in Redis or not,, the
// second of which served nothing in its last three closed minutes, and
// a Detector on them.
func detectorFixture(t *testing.T, keep bool) (*redistest.Server, *timeseries.ManualClock, *anomaly.Detector, []string) {
	t.Helper()
	srv := redistest.Start(t)
	start := time.Date(2026, 3, 4, 10, 10, 0, 0, time.UTC) // the hashes have no expiry: a fixed day
	names := seed(t, srv, start)
	clock := timeseries.NewManualClock(start)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	sc := &fromstore.Scanner{Store: store, Keep: keep}
	clock.Advance(30 * time.Second)
	for m := 1; m <= 3; m++ {
		srv.Do("HSET", "count:60:"+names[1], clock.Now().Truncate(time.Minute).Add(-time.Duration(m)*time.Minute).Unix(), 0)
	}
	return srv, clock, &anomaly.Detector{Scanner: sc}, names
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

// The route that went quiet breaks from its expectation, the others do
// not; one scan answers every question in a bucket, and a bucket is
// judged once Settle has passed since it closed.
func TestDetectorFindsADrop(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) { testDetectorFindsADrop(t, keep) })
	}
}

func testDetectorFindsADrop(t *testing.T, keep bool) {
	srv, clock, d, names := detectorFixture(t, keep)
	ctx := context.Background()
	detect := func(name string, reads int) alert.Finding {
		t.Helper()
		before := srv.Calls("HMGET")
		f, err := d.Detect(ctx, name, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if reads > 0 && keep {
			reads++ // the read of the incidents kept, a script's HMGET
		}
		if got := srv.Calls("HMGET") - before; got != reads {
			t.Errorf("%s at %v: %d HMGET, want %d", name, clock.Now(), got, reads)
		}
		return f
	}
	n := len(names)
	quiet := detect(names[1], 3*n) // the first question scans all three precisions
	if !quiet.Breached || (quiet.What != "drop down" && quiet.What != "level_shift down") || quiet.Value != 0 || quiet.Threshold <= 0 {
		t.Errorf("the quiet route: %+v, want a drop from a band above 0", quiet)
	}
	judged := clock.Now().Truncate(time.Minute).Add(-time.Minute)
	steady := detect(names[0], 0)
	if steady.Breached || steady.Value != count(t, srv, names[0], judged) || steady.Threshold <= 0 {
		t.Errorf("a steady route: %+v, want its count at %v and its expectation", steady, judged)
	}
	if f := detect("GET /nowhere", 0); f.Breached {
		t.Errorf("a series never written: %+v", f)
	}

	// Two seconds after the next minute closes, it may still be filling:
	// the minute before is judged, from the same scan.
	clock.Advance(32 * time.Second)
	if f := detect(names[1], 0); !f.Breached || f.Value != 0 {
		t.Errorf("within Settle: %+v, want the same drop", f)
	}
	// Once settled, the new minute is judged, the quiet route served
	// again in it; only the minutes are read again.
	clock.Advance(4 * time.Second)
	judged = clock.Now().Truncate(time.Minute).Add(-time.Minute)
	if f := detect(names[1], n); f.Breached || f.Value != count(t, srv, names[1], judged) {
		t.Errorf("after the quiet minutes: %+v, want its count at %v, not breached", f, judged)
	}
}

// An evaluator with the Detector fires an anomaly alert on the quiet
// route, and on no other; with Redis down the Detector says so.
func TestDetectorInAnAlert(t *testing.T) {
	srv, clock, d, names := detectorFixture(t, true)
	ctx := context.Background()
	e, err := alert.New(alert.Config{Pool: srv.Pool(), Clock: clock, Instance: "a", Interval: 50 * time.Millisecond,
		Rules: []alert.Rule{{Name: "RouteAnomaly", Kind: alert.Anomaly, Series: alert.EveryRoute}}, Detector: d})
	if err != nil {
		t.Fatal(err)
	}
	go e.Run(ctx)
	t.Cleanup(func() { _ = e.Close(ctx) })
	var body string
	for deadline := time.Now().Add(time.Minute); !strings.Contains(body, names[1]); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no firing alert on %s: %s", names[1], body)
		}
		rec := httptest.NewRecorder()
		e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/?state=firing&transitions=0", nil))
		b, _ := io.ReadAll(rec.Body)
		body = string(b)
	}
	for _, steady := range []string{names[0], names[2]} {
		if strings.Contains(body, steady) {
			t.Errorf("%s fires too: %s", steady, body)
		}
	}
	if !strings.Contains(body, `"anomaly":"drop down"`) && !strings.Contains(body, `"anomaly":"level_shift down"`) {
		t.Errorf("the alert does not say what broke: %s", body)
	}

	srv.Stop()
	fresh := &anomaly.Detector{Scanner: &fromstore.Scanner{Store: d.Scanner.Store}}
	if _, err := fresh.Detect(ctx, names[1], clock.Now()); err == nil {
		t.Error("no error with Redis down")
	}
	if _, err := (&anomaly.Detector{}).Detect(ctx, names[1], clock.Now()); err == nil {
		t.Error("a Detector without a Scanner: no error")
	}
}
