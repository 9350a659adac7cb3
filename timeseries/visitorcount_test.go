package timeseries_test

import (
	"encoding/binary"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/series"
	"github.com/pulse-dev/pulse/internal/visitors"
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

// sketched is what a HyperLogLog of the visitors addrOf(from) …
// addrOf(to-1), as visit records them on day, counts: their ids under the
// day's salt, which the recorder left in Redis, added to a sketch of the
// test's own. A sketch's count is off the true one by a random error
// (0.81 % on average, a few percent at times) that the day's random salt
// draws anew each run, so a test wanting an exact count compares with
// this; the recorder's count must match it exactly.
func sketched(t *testing.T, do func(key, cmd string, args ...any) any, day int64, from, to int) int64 {
	t.Helper()
	key := visitors.SaltKey("", visitors.DayOf(day))
	v, err := redis.Bytes(do(key, "GET", key), nil)
	if err != nil {
		t.Fatalf("the salt of day %d: %v", day, err)
	}
	salt, err := visitors.DecodeSalt(v)
	if err != nil {
		t.Fatal(err)
	}
	const ref = "test:sketched"
	args := []any{ref}
	for i := from; i < to; i++ {
		args = append(args, binary.BigEndian.AppendUint64(nil, salt.ClientID(addrOf(i), "test-agent/1.0")))
	}
	do(ref, "DEL", ref)
	do(ref, "PFADD", args...)
	n, err := redis.Int64(do(ref, "PFCOUNT", ref), nil)
	if err != nil {
		t.Fatal(err)
	}
	do(ref, "DEL", ref)
	return n
}
