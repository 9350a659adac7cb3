package timeseries_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// unionCount is PFCOUNT over every key of name at precision p: the union of
// its buckets.
func unionCount(t *testing.T, do func(key, cmd string, args ...any) any, p int, name string) (int64, int) {
	t.Helper()
	prefix, _ := series.Keys{}.VisitorKeyPrefix(p, name)
	keys, err := redis.Strings(do(prefix, "KEYS", globEscape(prefix)+"*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		return 0, 0
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	n, err := redis.Int64(do(keys[0], "PFCOUNT", args...), nil)
	if err != nil {
		t.Fatal(err)
	}
	return n, len(keys)
}

// assertVisitors checks name's visitors at every visitor precision: the
// sketches hold the visitors addrOf(0) … addrOf(n-1) of day (UTC, unix
// seconds), as many as a sketch of those visitors counts (sketched); and
// that no key was written at a precision that keeps none (5 s and 5 h).
func assertVisitors(t *testing.T, do func(key, cmd string, args ...any) any, name string, day int64, n int) {
	t.Helper()
	want := sketched(t, do, day, 0, n)
	for _, p := range series.DefaultVisitorPrecisions {
		if got, _ := unionCount(t, do, p, name); got != want {
			t.Errorf("%s at precision %d: %d visitors, want %d, the count of a sketch of the %d visitors", name, p, got, want, n)
		}
	}
	for _, p := range []int{5, 18000} {
		if n, keys := unionCount(t, do, p, name); keys != 0 {
			t.Errorf("%d visitors in %d keys at %d s, which keeps none", n, keys, p)
		}
	}
}

// sketched is what a sketch of the visitors addrOf(from) …
// addrOf(to-1), as visit records them on day, counts (tracktest.Sketched):
// the recorder's count of them must be exactly that.
func sketched(t *testing.T, do func(key, cmd string, args ...any) any, day int64, from, to int) int64 {
	t.Helper()
	var vs []timeseries.Visitor
	for i := from; i < to; i++ {
		vs = append(vs, timeseries.Visitor{Addr: addrOf(i), UserAgent: "test-agent/1.0"})
	}
	// Every command it sends names its one key first.
	byKey := func(cmd string, args ...any) any { return do(args[0].(string), cmd, args...) }
	return tracktest.Sketched(t, byKey, day, vs)
}
