package dashboard_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// memoFixture is a store on a real Redis with a manual clock, and a
// dashboard that keeps serving it: what it answers must always be what a
// new dashboard, reading every bucket, answers.
type memoFixture struct {
	t     *testing.T
	srv   *redistest.Server
	store *timeseries.Store
	clock *timeseries.ManualClock
	kept  http.Handler
	rng   *rand.Rand
}

func newMemoFixture(t *testing.T) *memoFixture {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(time.Unix(1800000002, 0))
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	f := &memoFixture{t: t, srv: srv, store: store, clock: clock, rng: rand.New(rand.NewPCG(1, 2))}
	f.kept = f.handler()
	return f
}

func (f *memoFixture) handler() http.Handler {
	h, err := dashboard.Handler(dashboard.Config{Store: f.store, Timeout: 10 * time.Second})
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

// hit adds n to the bucket of name at precision p holding unix time at,
// and lists the series, as a recorder's flush does.
func (f *memoFixture) hit(name string, p int, at, n int64) {
	f.srv.Do("HINCRBY", f.store.Schema().CountKey(p, name), timeseries.BucketStart(at, p), n)
	f.srv.Do("ZADD", f.store.Schema().KnownKey(), 0, timeseries.KnownMember(p, name))
}

// spread writes name's hits at 5 s and 1 min into random buckets of the
// last span seconds.
func (f *memoFixture) spread(name string, span int64) {
	now := f.clock.Now().Unix()
	for range 20 {
		at := now - f.rng.Int64N(span)
		for _, p := range []int{5, 60} {
			f.hit(name, p, at, 1+f.rng.Int64N(9))
		}
	}
}

// recent writes hits of now and of 3 s ago, as a recorder flushes them
// within its settle time, to every name at both precisions.
func (f *memoFixture) recent(names ...string) {
	now := f.clock.Now().Unix()
	for _, name := range names {
		for _, p := range []int{5, 60} {
			f.hit(name, p, now, 1+f.rng.Int64N(5))
			f.hit(name, p, now-3, 1+f.rng.Int64N(3))
		}
	}
}

var memoPaths = []string{
	"/api/overview?precision=5",
	"/api/overview?precision=5&n=3&series=GET+/r7&series=nope&series=GET+/r1+status:5xx",
	"/api/overview?precision=60",
	"/api/overview?precision=5&last=30",
	"/api/routes?precision=5",
	"/api/routes?precision=60&sort=errors",
}

func get(h http.Handler, path string) (int, string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w.Code, w.Body.String()
}

// same asserts that the kept dashboard answers every path as a new one
// does, and api/overview?precision=5 with status.
func (f *memoFixture) same(step string, status int) {
	f.t.Helper()
	for i, path := range memoPaths {
		code, body := get(f.kept, path)
		wantCode, want := get(f.handler(), path)
		if code != wantCode || body != want {
			f.t.Errorf("%s: %s: kept answers %d, a full read %d; %s", step, path, code, wantCode, firstDiff(body, want))
		}
		if i == 0 && code != status {
			f.t.Errorf("%s: %s: status %d, want %d: %s", step, path, code, status, body)
		}
	}
}

// TestOverviewKeptMatchesFull: a dashboard that keeps its windows between
// reads answers, refresh after refresh, what a full read answers, through
// new buckets, late hits within the settle time, series new and removed,
// the cleaner trimming into the window, a series deleted and written
// again, and the clock going back or leaping past the window.
func TestOverviewKeptMatchesFull(t *testing.T) {
	f := newMemoFixture(t)
	names := []string{"GET /r1 status:5xx", "slow:250ms GET /r2"}
	for i := range 30 {
		names = append(names, fmt.Sprintf("GET /r%d", i))
	}
	for _, name := range names {
		f.spread(name, 3600)
	}
	schema := f.store.Schema()
	steps := []struct {
		name    string
		advance time.Duration
		change  func()
	}{
		{"first read", 0, func() {}},
		{"hits in the open bucket", time.Second, func() { f.recent(names[:10]...) }},
		{"the next bucket", 4 * time.Second, func() { f.recent(names...) }},
		{"a new series", 3 * time.Second, func() { names = append(names, "GET /new"); f.spread("GET /new", 3600) }},
		{"a series removed", 2 * time.Second, func() {
			for _, p := range []int{5, 60} {
				f.srv.Do("DEL", schema.CountKey(p, "GET /r3"))
				f.srv.Do("ZREM", schema.KnownKey(), timeseries.KnownMember(p, "GET /r3"))
			}
		}},
		{"buckets on", 23 * time.Second, func() { f.recent(names...) }},
		{"the cleaner trims into the window", 5 * time.Second, func() {
			cut := f.clock.Now().Unix() - 300
			for _, name := range names {
				for _, p := range []int{5, 60} {
					key, fields := schema.CountKey(p, name), []string(nil)
					for _, field := range redisStrings(f.srv.Do("HKEYS", key)) {
						var at int64
						if fmt.Sscan(field, &at); at < cut {
							fields = append(fields, field)
						}
					}
					if len(fields) > 0 {
						f.srv.Do("HDEL", append([]any{key}, anys(fields)...)...)
					}
				}
			}
		}},
		{"a series deleted and written again", 5 * time.Second, func() {
			for _, p := range []int{5, 60} {
				f.srv.Do("DEL", schema.CountKey(p, "GET /r5"))
			}
			f.recent("GET /r5")
		}},
		{"the clock back", -20 * time.Second, func() { f.recent(names[:5]...) }},
		{"past the window", 700 * time.Second, func() { f.recent(names...) }},
		{"idle a while", 65 * time.Second, func() {}},
		{"an hour on", time.Hour, func() { f.spread("GET /r9", 300) }},
	}
	for _, s := range steps {
		f.clock.Advance(s.advance)
		s.change()
		f.same(s.name, http.StatusOK)
		f.recent(names[:3]...) // between two polls in the same bucket
		f.same(s.name+", polled again", http.StatusOK)
	}
}

// TestOverviewKeptAfterFailedRead: a read Redis fails after the series
// are listed is answered as a new dashboard answers it, and the next one,
// Redis well again, is a full read's answer.
func TestOverviewKeptAfterFailedRead(t *testing.T) {
	cases := []struct {
		name         string
		fail, repair func(f *memoFixture)
	}{
		{"bucket reads refused", func(f *memoFixture) { f.srv.Do("ACL", "SETUSER", "default", "-hmget") },
			func(f *memoFixture) { f.srv.Do("ACL", "SETUSER", "default", "+hmget") }},
		{"a series of the wrong type", func(f *memoFixture) {
			f.srv.Do("DEL", f.store.Schema().CountKey(5, "GET /bad"))
			f.srv.Do("SET", f.store.Schema().CountKey(5, "GET /bad"), "x")
		}, func(f *memoFixture) {
			f.srv.Do("DEL", f.store.Schema().CountKey(5, "GET /bad"))
			f.hit("GET /bad", 5, f.clock.Now().Unix()-300, 4)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newMemoFixture(t)
			names := []string{"GET /r1", "GET /r2", "GET /r3"}
			for _, name := range append(names, "GET /bad") {
				f.spread(name, 3600)
			}
			f.same("before", http.StatusOK)
			f.clock.Advance(5 * time.Second)
			c.fail(f)
			f.recent(names...)
			f.same("failing", http.StatusServiceUnavailable)
			// Hits the failed read did not see, in a bucket settled by the
			// next read: only a full read finds them.
			f.hit("GET /r1", 5, f.clock.Now().Unix()-60, 7)
			c.repair(f)
			f.clock.Advance(10 * time.Second)
			f.same("after", http.StatusOK)
		})
	}
}

// firstDiff shows where two answers part.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d: kept …%s… full …%s…", i, got[from:min(len(got), i+80)], want[from:min(len(want), i+80)])
}

func redisStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, string(x.([]byte)))
	}
	return out
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}
