package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/example/forum"
	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// twin is one of the two examples the parity test runs: on a private
// redis-server, or on the embedded server.
type twin struct {
	name, base string
	conn       redis.Conn
}

// heldClock is the twins' one clock: the real time when last set, so
// that both stamp a step's requests with the same second whatever the
// machine's load makes each take.
type heldClock struct{ unixNano atomic.Int64 }

func newHeldClock() *heldClock {
	c := &heldClock{}
	c.set()
	return c
}

// set moves the clock to the real time.
func (c *heldClock) set() { c.unixNano.Store(time.Now().UnixNano()) }

func (c *heldClock) Now() time.Time { return time.Unix(0, c.unixNano.Load()) }

// startTwins runs the example on a private redis-server and on the
// embedded server `make run` falls back to, each with its own SQLite,
// their hits stamped by clock.
func startTwins(t *testing.T, clock timeseries.Clock) [2]twin {
	srv := redistest.Start(t)
	realBase, _ := startExample(t, srv, options{clock: clock})
	realConn, err := redis.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { realConn.Close() })

	var logs syncBuffer
	var embConn redis.Conn
	embBase, _ := startExample(t, nil, options{RedisServer: embeddedRedis, logTo: &logs, clock: clock})
	m := regexp.MustCompile(`addr=(\S+) redis=embedded`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("the log does not name the embedded server:\n%s", logs.String())
	}
	embConn, err = redis.Dial("tcp", m[1])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { embConn.Close() })
	return [2]twin{{"redis-server", realBase, realConn}, {"embedded", embBase, embConn}}
}

// awayFromEdge waits, when a 5 s bucket ends within margin, until the
// next one has begun, so that what follows falls in one bucket of every
// precision on both twins.
func awayFromEdge(margin time.Duration) {
	now := time.Now()
	next := now.Truncate(5 * time.Second).Add(5 * time.Second)
	if next.Sub(now) < margin {
		time.Sleep(next.Sub(now) + 10*time.Millisecond)
	}
}

// sameBucket reports whether a and b fall in one 5 s bucket.
func sameBucket(a, b time.Time) bool {
	return a.Truncate(5 * time.Second).Equal(b.Truncate(5 * time.Second))
}

// readJSON GETs path from the twin's dashboard API into v, failing t on
// anything but 200.
func readJSON(t *testing.T, base, path string, v any) int {
	t.Helper()
	resp, err := http.Get(base + "/dashboard/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return resp.StatusCode
}

// seedSeries writes the same history of a series, n minutes of it with a
// burst in the last few, into both twins' Redis, as a recorder would
// have: its hash at 60 s and its entry in known:.
func seedSeries(t *testing.T, tw [2]twin, name string, n int) {
	now := timeseries.BucketStart(time.Now().Unix(), 60)
	args := []any{"count:60:" + name}
	for i := 1; i <= n; i++ {
		count := 100 + 30*math.Sin(float64(i)/9) + float64(i%7)
		if i <= 3 {
			count *= 6
		}
		args = append(args, now-int64(60*i), int(count))
	}
	for _, w := range tw {
		if _, err := w.conn.Do("HSET", args...); err != nil {
			t.Fatal(err)
		}
		if _, err := w.conn.Do("ZADD", "known:", 0, "60:"+name); err != nil {
			t.Fatal(err)
		}
	}
}

// The same demo traffic played to the example on a private redis-server
// and on the embedded server gives the same answers from every API the
// dashboard reads: the counts of every series at all six precisions, the
// routes' hits and status classes, the duration counts, the unique
// visitors of each minute and of the window, the union of minutes the
// same visitors came back in (within the sketches' error of each other
// and of the true count), the forum's entities, forecasts, incidents and
// alerts.
//
// Both twins' hits are stamped by one clock, held at the real time a
// step starts, so a step's two requests fall in one bucket of every
// precision on both.
func TestEmbeddedMatchesRedisServer(t *testing.T) {
	t.Parallel()
	clock := newHeldClock()
	tw := startTwins(t, clock)
	// 100 minutes, not the window's 120: each twin's cleaner drops the
	// buckets older than the window by the time of its own pass, and two
	// passes a minute's edge apart would trim the twins differently.
	seedSeries(t, tw, "seeded", 100)
	seeded := seedVisitors(t, tw, 5, 40)
	visitors := forum.NewDemoVisitors()
	defer visitors.Close()
	// Each request may take as long as a loaded machine makes it: a
	// deadline here guards against a hang (harness.Hang), and a request
	// that failed is a difference between the twins.
	send := func(base string, s forum.DemoStep) int {
		ctx, cancel := context.WithTimeout(context.Background(), harness.Hang)
		defer cancel()
		return visitors.Send(ctx, base, s)
	}
	steps := forum.DemoSteps(48, 600)
	seen := map[int]bool{}
	for _, s := range steps {
		clock.set()
		seen[s.Visitor] = true
		a, b := send(tw[0].base, s), send(tw[1].base, s)
		if a != b || a == 0 || a >= 500 {
			t.Fatalf("%s %s: %d on %s, %d on %s", s.Method, s.Path, a, tw[0].name, b, tw[1].name)
		}
	}
	clock.set()
	// An admin refusal is not traffic: it must not move either twin.
	for _, w := range tw {
		resp, err := http.Post(w.base+"/api/admin/reconcile", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	waitFlushed(t, tw, len(steps))

	awayFromEdge(3 * time.Second)
	compareSeries(t, tw)
	for _, path := range []string{
		"api/routes?precision=60&last=10",
		"api/entities/post?ids=1,2,3,4,5",
		"api/entities/user?ids=1,2,3,4,5",
		"api/entities/post/top?field=views&n=5",
		"api/forecast/seeded?precision=60&horizon=12",
		"api/forecast/hits?precision=5",
		"api/anomalies?precision=60&last=12",
	} {
		compareAnswers(t, tw, path, durationFields)
	}
	compareVisitors(t, tw, seeded+len(seen))
	compareAlerts(t, tw)
}

// durationFields are the fields that measure time, which the twins
// cannot share: their requests take what they take. Their counts
// (timed, count) must still agree.
var durationFields = []string{"mean", "p50", "p90", "p99", "max", "min", "sum"}

// waitFlushed waits until both twins' day total of hits is n.
func waitFlushed(t *testing.T, tw [2]twin, n int) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		done := true
		for _, w := range tw {
			var ans struct{ Samples []timeseries.Sample }
			readJSON(t, w.base, "api/counters/hits?precision=86400&last=2", &ans)
			var sum int64
			for _, s := range ans.Samples {
				sum += s.Count
			}
			if sum > int64(n) {
				t.Fatalf("%s counted %d hits for %d requests: something besides the traffic was counted", w.name, sum, n)
			}
			done = done && sum == int64(n)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("hits not flushed on both twins within 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// compareSeries compares both twins' lists of series and every series'
// samples at each of its precisions.
func compareSeries(t *testing.T, tw [2]twin) {
	var lists [2]struct{ Counters []timeseries.SeriesInfo }
	for i, w := range tw {
		readJSON(t, w.base, "api/counters", &lists[i])
	}
	if !reflect.DeepEqual(lists[0], lists[1]) {
		t.Fatalf("series differ:\n%s: %v\n%s: %v", tw[0].name, lists[0], tw[1].name, lists[1])
	}
	compared := 0
	for _, info := range lists[0].Counters {
		for _, p := range info.Precisions {
			compareAnswers(t, tw, fmt.Sprintf("api/counters/%s?precision=%d&last=120", url.PathEscape(info.Name), p), nil)
			compared++
		}
	}
	if precisions := len(lists[0].Counters[0].Precisions); precisions != 6 || compared < 60 {
		t.Errorf("compared %d series at %d precisions, want many at six", compared, precisions)
	}
}

// compareAnswers compares the JSON of path on both twins, field by field,
// leaving out the fields named in skip. The API reads by the real time,
// so the two answers are compared only when both were read within one 5 s
// bucket (so within one bucket of every precision): a pair of reads that
// a bucket's edge fell between, as a loaded machine makes some, is read
// again.
func compareAnswers(t *testing.T, tw [2]twin, path string, skip []string) {
	t.Helper()
	var got [2]any
	var status [2]int
	deadline := time.Now().Add(harness.Hang)
	for {
		awayFromEdge(time.Second)
		before := time.Now()
		for i, w := range tw {
			got[i] = nil
			status[i] = readJSON(t, w.base, path, &got[i])
			got[i] = without(got[i], skip)
		}
		if sameBucket(before, time.Now()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no pair of reads within one 5 s bucket in %s", path, harness.Hang)
		}
	}
	if status[0] != status[1] || !reflect.DeepEqual(got[0], got[1]) {
		a, _ := json.Marshal(got[0])
		b, _ := json.Marshal(got[1])
		t.Errorf("%s:\n%s (%d): %s\n%s (%d): %s", path, tw[0].name, status[0], a, tw[1].name, status[1], b)
	}
}

// without is v with the object fields named in skip removed, at any depth.
func without(v any, skip []string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if slices.Contains(skip, k) {
				delete(x, k)
			} else {
				x[k] = without(e, skip)
			}
		}
	case []any:
		for i := range x {
			x[i] = without(x[i], skip)
		}
	}
	return v
}

// seedVisitors adds the same n visitors to the hits series' sketches of
// each of the minutes before the current one, into both twins, as n
// visitors who come back every minute leave them, and returns n: their
// union over the window, where the sum of the minutes' counts is
// minutes × n.
func seedVisitors(t *testing.T, tw [2]twin, minutes, n int) int {
	now := timeseries.BucketStart(time.Now().Unix(), 60)
	for m := 1; m <= minutes; m++ {
		key, _ := timeseries.Schema{}.VisitorKey(60, "hits", now-int64(60*m))
		args := []any{key}
		for v := range n {
			args = append(args, fmt.Sprintf("returning visitor %d", v))
		}
		for _, w := range tw {
			if _, err := w.conn.Do("PFADD", args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

// sketchError is how far two HyperLogLog counts of the same set may be
// apart, or one from the true count: the embedded server's sketch is
// another algorithm than Redis's, with the same 16384 registers (a
// standard error of 0.81 %); three of them, and one for rounding.
func sketchError(n int64) int64 { return 1 + int64(math.Ceil(3*0.0081*float64(n))) }

func near(a, b int64) bool { return max(a-b, b-a) <= sketchError(max(a, b)) }

// compareVisitors checks the visitors of the hits series over the last
// hour at 60 s, bucket by bucket and the window's union, on both twins
// against the visitors the traffic had.
func compareVisitors(t *testing.T, tw [2]twin, want int) {
	var ans [2]struct {
		Buckets []struct{ Time, Visitors int64 }
		Window  struct{ Visitors int64 }
	}
	for i, w := range tw {
		readJSON(t, w.base, "api/visitors/hits?precision=60&last=60", &ans[i])
	}
	if len(ans[0].Buckets) != len(ans[1].Buckets) {
		t.Fatalf("visitors: %d buckets on %s, %d on %s", len(ans[0].Buckets), tw[0].name, len(ans[1].Buckets), tw[1].name)
	}
	for i, b := range ans[0].Buckets {
		o := ans[1].Buckets[i]
		if b.Time != o.Time || !near(b.Visitors, o.Visitors) {
			t.Errorf("visitors of bucket %d: %d on %s, %d on %s", b.Time, b.Visitors, tw[0].name, o.Visitors, tw[1].name)
		}
	}
	for i, w := range tw {
		if got := ans[i].Window.Visitors; !near(got, int64(want)) {
			t.Errorf("%s: %d visitors over the window, want the union's %d", w.name, got, want)
		}
	}
}

// compareAlerts compares the rules and the state of each of their alerts.
func compareAlerts(t *testing.T, tw [2]twin) {
	var states [2][]string
	for i, w := range tw {
		for _, r := range readAlerts(t, w.base).Rules {
			for _, a := range r.Alerts {
				states[i] = append(states[i], r.Name+" "+a.Labels["severity"]+" "+a.State)
			}
		}
	}
	if len(states[0]) == 0 || !slices.Equal(states[0], states[1]) {
		t.Errorf("alerts differ:\n%s: %v\n%s: %v", tw[0].name, states[0], tw[1].name, states[1])
	}
}
