package timeseries_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// finished is a request as the middlewares record it, and recordFinished
// records it as they do.
type finished = timeseries.Request

var recordFinished = (*timeseries.Recorder).RecordRequest

// visit records one request of the visitor at addr (a fixed User-Agent)
// in cs, as the middlewares do: a hit and the visitor in each.
func visit(r *timeseries.Recorder, addr string, cs ...*timeseries.Counter) {
	f := finished{Visitor: timeseries.Visitor{Addr: addr, UserAgent: "test-agent/1.0"}}
	for i, c := range cs {
		f.Timed[i] = c
		f.Visited |= 1 << i
	}
	recordFinished(r, f)
}

func addrOf(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }

// readyRecorder is a recorder whose salts are loaded (its first flush
// fetches them), so the visitors recorded next are counted.
func readyRecorder(t *testing.T, srv *redistest.Server, cfg timeseries.Config) *timeseries.Recorder {
	t.Helper()
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = time.Hour
	}
	r := newRecorder(t, srv, cfg)
	flush(t, r)
	return r
}

// Two recorders sharing a server share the day's salt, so a visitor seen
// by both is one: the union, not the sum.
func TestVisitorsDistinct(t *testing.T) {
	srv := redistest.Start(t)
	// A clock that stands still: the real one could cross midnight between
	// the two recorders, and a new day's salt makes every visitor new.
	at := testnow.Now()
	tests := []struct {
		name   string
		ranges [][2]int // ids each recorder sees, [from, to)
	}{
		{"one recorder", [][2]int{{0, 1000}}},
		{"two recorders, overlapping halves", [][2]int{{0, 600}, {400, 1000}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			for _, rg := range tt.ranges {
				r := readyRecorder(t, srv, timeseries.Config{Clock: timeseries.NewManualClock(at)})
				hits := mustCounter(t, r, "hits")
				for i := rg[0]; i < rg[1]; i++ {
					visit(r, addrOf(i), hits)
					visit(r, addrOf(i), hits) // the same visitor again
				}
				flush(t, r)
				if h := r.Health(); h.PendingVisitors != 0 || h.DroppedVisitors != 0 {
					t.Errorf("health after flush: %d visitors pending, %d dropped", h.PendingVisitors, h.DroppedVisitors)
				}
			}
			assertVisitors(t, serverDo(srv), "hits", at.Unix(), 1000)
		})
	}
}

// A window of 12 five-minute buckets: PFCOUNT over their keys is the
// union of the visitors of its parts, each bucket holding its own.
func TestVisitorsWindowUnion(t *testing.T) {
	srv := redistest.Start(t)
	// The window starts at the current bucket, so Redis (on the real
	// clock) keeps every key it writes, and lies within one UTC day, so one
	// salt serves it: when the hour would cross midnight it starts there.
	start := series.BucketStart(testnow.Now().Unix(), 300)
	if midnight := series.BucketStart(start, 86400) + 86400; start+12*300 > midnight {
		start = midnight
	}
	clock := timeseries.NewManualClock(time.Unix(start, 0))
	r := readyRecorder(t, srv, timeseries.Config{Clock: clock, MaxPendingAge: 24 * time.Hour})
	hits := mustCounter(t, r, "hits")
	union := map[int]bool{}
	var keys []any
	for b := range 12 {
		// Bucket b sees visitors 100b … 100b+299: each overlaps the next two.
		for i := 100 * b; i < 100*b+300; i++ {
			visit(r, addrOf(i), hits)
			union[i] = true
		}
		flush(t, r)
		key, _ := series.Keys{}.VisitorKey(300, "hits", clock.Now().Unix()/300*300)
		n, _ := redis.Int64(srv.Do("PFCOUNT", key), nil)
		if want := sketched(t, serverDo(srv), start, 100*b, 100*b+300); n != want {
			t.Errorf("bucket %d: %d visitors, want %d, the count of a sketch of its 300", b, n, want)
		}
		keys = append(keys, key)
		clock.Advance(300 * time.Second)
	}
	got, _ := redis.Int64(srv.Do("PFCOUNT", keys...), nil)
	if want := sketched(t, serverDo(srv), start, 0, len(union)); got != want {
		t.Errorf("window of 12 buckets: %d visitors, want %d, the count of a sketch of the union's %d", got, want, len(union))
	}
}

// The same client on both sides of midnight (UTC) is two visitors: the
// salt is the day's. Within a day it is one.
func TestVisitorsSaltRotatesAtMidnight(t *testing.T) {
	srv := redistest.Start(t)
	midnight := (testnow.Now().Unix()/86400 + 1) * 86400
	tests := []struct {
		name  string
		after time.Duration // from 2 min before midnight to the second visit
		want  int64
	}{
		{"same day", time.Minute, 1},
		{"after midnight", 3 * time.Minute, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			clock := timeseries.NewManualClock(time.Unix(midnight-120, 0))
			r := readyRecorder(t, srv, timeseries.Config{Clock: clock})
			hits := mustCounter(t, r, "hits")
			visit(r, "192.0.2.1", hits)
			first, _ := series.Keys{}.VisitorKey(300, "hits", midnight-300)
			clock.Advance(tt.after)
			flush(t, r) // fetches the next day's salt if need be
			visit(r, "192.0.2.1", hits)
			flush(t, r)
			second, _ := series.Keys{}.VisitorKey(300, "hits", series.BucketStart(clock.Now().Unix(), 300))
			if got, _ := redis.Int64(srv.Do("PFCOUNT", first, second), nil); got != tt.want {
				t.Errorf("one client at %s and %s: %d visitors, want %d", time.Unix(midnight-120, 0).UTC(), clock.Now().UTC(), got, tt.want)
			}
			// Each day's salt expires just after its day.
			day := midnight - 86400
			key := fmt.Sprintf("pulse:salt:%d", day)
			if at, _ := redis.Int64(srv.Do("EXPIRETIME", key), nil); at != midnight+300 {
				t.Errorf("salt of day %d expires at %d, want %d", day, at, midnight+300)
			}
		})
	}
}

// A visitor key holding another type is skipped and reported; the other
// keys get their visitors and nothing stays pending.
func TestVisitorsWrongTypeKey(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(time.Unix(series.BucketStart(testnow.Now().Unix(), 300)+10, 0))
	r := readyRecorder(t, srv, timeseries.Config{Clock: clock})
	hits := mustCounter(t, r, "hits")
	bad, _ := series.Keys{}.VisitorKey(300, "hits", series.BucketStart(clock.Now().Unix(), 300))
	srv.Do("SET", bad, "not a sketch")
	for i := range 100 {
		visit(r, addrOf(i), hits)
	}
	flush(t, r)
	h := r.Health()
	if h.PendingVisitors != 0 || h.DroppedVisitors != 100 || h.LastDroppedKey != bad {
		t.Errorf("health: %d pending, %d dropped, last dropped key %q; want 0, 100, %q", h.PendingVisitors, h.DroppedVisitors, h.LastDroppedKey, bad)
	}
	hour, _ := series.Keys{}.VisitorKey(3600, "hits", series.BucketStart(clock.Now().Unix(), 3600))
	n, _ := redis.Int64(srv.Do("PFCOUNT", hour), nil)
	if want := sketched(t, serverDo(srv), clock.Now().Unix(), 0, 100); n != want {
		t.Errorf("hour key: %d visitors, want %d, the count of a sketch of the 100", n, want)
	}
	if v, _ := redis.String(srv.Do("GET", bad), nil); v != "not a sketch" {
		t.Errorf("the refused key now holds %q", v)
	}
}

// A Redis outage mid-run loses no visitor: ids wait until PFADD says OK.
func TestVisitorsSurviveOutage(t *testing.T) {
	srv := redistest.Start(t)
	// A clock that stands still, so midnight cannot change the salt
	// mid-test; a killed Redis refuses at once, so no short timeout is
	// needed for the flush that fails.
	clock := timeseries.NewManualClock(testnow.Now())
	r := readyRecorder(t, srv, timeseries.Config{Clock: clock, FlushTimeout: 5 * time.Second})
	hits := mustCounter(t, r, "hits")
	for i := range 500 {
		visit(r, addrOf(i), hits)
	}
	flush(t, r)
	srv.Kill()
	for i := 400; i < 1000; i++ {
		visit(r, addrOf(i), hits)
	}
	if err := r.Flush(canceledAfter(t, time.Second)); err == nil {
		t.Fatal("flush with Redis down succeeded")
	}
	if h := r.Health(); h.PendingVisitors == 0 {
		t.Fatal("no visitor pending while Redis is down")
	}
	srv.Restart()
	flush(t, r)
	if h := r.Health(); h.PendingVisitors != 0 || h.DroppedVisitors != 0 {
		t.Errorf("after restart: %d pending, %d dropped", h.PendingVisitors, h.DroppedVisitors)
	}
	assertVisitors(t, serverDo(srv), "hits", clock.Now().Unix(), 1000)
}

// Visitors Close cannot send go to SpillDir, and the next Recorder sends
// them and removes the file.
func TestVisitorsSpill(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	// A stopped Redis refuses at once: the timeout only has to spare the
	// flushes that succeed on a loaded machine. The clock stands still, so
	// midnight cannot change the salt mid-test.
	clock := timeseries.NewManualClock(testnow.Now())
	cfg := timeseries.Config{SpillDir: dir, FlushTimeout: 5 * time.Second, Clock: clock}
	r := readyRecorder(t, srv, cfg)
	hits := mustCounter(t, r, "hits")
	for i := range 1000 {
		visit(r, addrOf(i), hits)
	}
	srv.Stop()
	if err := r.Close(canceledAfter(t, time.Second)); err != nil {
		t.Fatal(err)
	}
	files := spillFiles(t, dir, ".visitors")
	if len(files) != 1 {
		t.Fatalf("%d visitor spill files, want 1", len(files))
	}
	srv.Restart()
	next := readyRecorder(t, srv, cfg)
	if h := next.Health(); h.PendingVisitors != 0 {
		t.Errorf("%d visitors pending after the first flush", h.PendingVisitors)
	}
	assertVisitors(t, serverDo(srv), "hits", clock.Now().Unix(), 1000)
	if files := spillFiles(t, dir, ".visitors"); len(files) != 0 {
		t.Errorf("spill files left after sending: %s", strings.Join(files, " "))
	}
}

// canceledAfter is a context that ends after d, or with t.
func canceledAfter(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func spillFiles(t *testing.T, dir, suffix string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A visitor spill file that is torn or edited is set aside, not half
// sent, and the recorder starts.
func TestVisitorsSpillSetAside(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "pulse-x-1.visitors")
	if err := os.WriteFile(name, []byte(`{"version":1,"keys":[{"key":"uv:{count:300:hits}:0","ids":[1]}],"sha256":"00"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reported []string
	r := readyRecorder(t, srv, timeseries.Config{SpillDir: dir, OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err.Error())
	}})
	if h := r.Health(); h.PendingVisitors != 0 {
		t.Errorf("%d visitors pending from a torn file", h.PendingVisitors)
	}
	if _, err := os.Stat(name + ".bad"); err != nil {
		t.Errorf("the torn file was not set aside: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) == 0 || !strings.Contains(reported[0], "checksum") {
		t.Errorf("reported %q, want the checksum mismatch", reported)
	}
}

// TestCloseReportsLostVisitors: without a SpillDir, a Close that cannot
// reach Redis says how many visitor ids it leaves unwritten, as it says
// how many hits.
func TestCloseReportsLostVisitors(t *testing.T) {
	srv := redistest.Start(t)
	r := readyRecorder(t, srv, timeseries.Config{FlushTimeout: 5 * time.Second})
	hits := mustCounter(t, r, "hits")
	recordFinished(r, finished{
		Timed:   [timeseries.MaxTimed]*timeseries.Counter{hits},
		Visitor: timeseries.Visitor{Addr: "192.0.2.7", UserAgent: "test-agent/1.0"},
		Visited: 1,
	})
	srv.Stop()
	t.Cleanup(srv.Restart)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := r.Close(ctx)
	pending := r.Health().PendingVisitors
	if pending == 0 {
		t.Fatal("no visitor ids pending after a Close that could not reach Redis")
	}
	want := fmt.Sprintf("1 hits and %d visitor ids not written", pending)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Close: %v, want an error saying %q", err, want)
	}
}
